"""``airflow.plugins_manager``: the plugin base class plugin files import."""

from updraft.plugins import (
    AirflowPlugin,
    AirflowPluginException,
    plugin_import_errors,
    registered_timetables,
)


def get_timetables_plugins() -> dict[str, type]:
    """Airflow's name for the registered custom timetables, keyed by class path."""
    return registered_timetables()


__all__ = [
    "AirflowPlugin",
    "AirflowPluginException",
    "get_timetables_plugins",
    "plugin_import_errors",
    "registered_timetables",
]
