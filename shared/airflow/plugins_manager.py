"""``airflow.plugins_manager``: the plugin base class plugin files import."""

from updraft.plugins import (
    AirflowPlugin,
    AirflowPluginException,
    plugin_import_errors,
    registered_priority_weight_strategies,
    registered_timetables,
)


def get_timetables_plugins() -> dict[str, type]:
    """Airflow's name for the registered custom timetables, keyed by class path."""
    return registered_timetables()


def get_priority_weight_strategy_plugins() -> dict[str, type]:
    """Airflow's name for the registered custom priority weight strategies, keyed by class path."""
    return registered_priority_weight_strategies()


__all__ = [
    "AirflowPlugin",
    "AirflowPluginException",
    "get_priority_weight_strategy_plugins",
    "get_timetables_plugins",
    "plugin_import_errors",
    "registered_priority_weight_strategies",
    "registered_timetables",
]
