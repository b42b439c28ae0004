"""Airflow-style plugins: how user code (custom timetables, macros, extra links) becomes known to Updraft.

Airflow discovers plugins by scanning modules for ``AirflowPlugin`` subclasses. Here a subclass registers
itself the moment its class statement runs (``__init_subclass__``), so importing a plugin file, whether
through :func:`load_plugins_folder` or from a DAG file, is all it takes. The registry is process-wide on
purpose: a serialized DAG naming a custom timetable can only be decoded by a process that loaded the
plugin defining it, and there is exactly one such lookup table per process, as in Airflow.

The registry imports nothing of Updraft's: the SDK and the timetables ask it for plugin priority strategies, extra
links and timetables, so it sits below them (a plugin's JSON dump for the API is ``updraft.parsing.plugin_info``).
"""

from __future__ import annotations

import importlib.util
import logging
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar, NamedTuple

__all__ = [
    "AirflowPlugin",
    "AirflowPluginException",
    "PluginsLoadResult",
    "load_plugins_folder",
    "plugin_import_errors",
    "registered_plugins",
    "registered_priority_weight_strategies",
    "registered_timetables",
]

log = logging.getLogger(__name__)

_plugins: dict[str, type[AirflowPlugin]] = {}
_import_errors: dict[str, str] = {}


class AirflowPluginException(Exception):
    """A plugin is malformed (e.g. has no name)."""


def _class_path(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


class AirflowPlugin:
    """Subclass with a ``name`` and any of the extension lists below to extend Updraft.

    The attributes are Airflow's; Updraft acts on ``timetables``, ``macros``, ``priority_weight_strategies``,
    ``global_operator_extra_links`` and ``operator_extra_links`` (``sdk.operator_link``) and keeps the others so
    that plugins written for Airflow import and register unchanged.
    """

    name: ClassVar[str | None] = None
    source: Any = None
    macros: ClassVar[list[Any]] = []
    admin_views: ClassVar[list[Any]] = []
    flask_blueprints: ClassVar[list[Any]] = []
    fastapi_apps: ClassVar[list[Any]] = []
    fastapi_root_middlewares: ClassVar[list[Any]] = []
    external_views: ClassVar[list[Any]] = []
    react_apps: ClassVar[list[Any]] = []
    menu_links: ClassVar[list[Any]] = []
    appbuilder_views: ClassVar[list[Any]] = []
    appbuilder_menu_items: ClassVar[list[Any]] = []
    global_operator_extra_links: ClassVar[list[Any]] = []
    operator_extra_links: ClassVar[list[Any]] = []
    timetables: ClassVar[list[type]] = []
    listeners: ClassVar[list[Any]] = []
    hook_lineage_readers: ClassVar[list[Any]] = []
    priority_weight_strategies: ClassVar[list[Any]] = []

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.validate()
        _register(cls)

    @classmethod
    def validate(cls) -> None:
        if not cls.name:
            raise AirflowPluginException("Your plugin needs a name.")

    @classmethod
    def on_load(cls, *args: Any, **kwargs: Any) -> None:
        """Hook run once when the plugin is registered."""


def _register(cls: type[AirflowPlugin]) -> None:
    name = cls.name
    assert name  # validate() ran first
    existing = _plugins.get(name)
    if existing is not None and _class_path(existing) != _class_path(cls):
        message = f"Plugin {name!r} already registered, skipping"
        log.warning(message)
        _import_errors[_class_path(cls)] = message
        return
    # Same name and path: the module was imported again (reload, second loader); the newest class wins
    # so its timetables are the objects DAG files now hold.
    _plugins[name] = cls
    try:
        cls.on_load()
    except Exception as exc:  # a broken plugin must not take the process down
        log.exception("Failed to load plugin %s", name)
        _import_errors[_class_path(cls)] = str(exc)
        del _plugins[name]


def registered_plugins() -> dict[str, type[AirflowPlugin]]:
    """Registered plugin classes by plugin name."""
    return dict(_plugins)


def registered_timetables() -> dict[str, type]:
    """Timetable classes contributed by plugins, keyed by ``module.QualName`` (their serialized name)."""
    return {_class_path(tt): tt for plugin in _plugins.values() for tt in plugin.timetables}


def registered_priority_weight_strategies() -> dict[str, type]:
    """Priority weight strategy classes contributed by plugins, keyed by ``module.QualName`` (as serialized)."""
    return {_class_path(s): s for plugin in _plugins.values() for s in plugin.priority_weight_strategies}


def plugin_import_errors() -> dict[str, str]:
    """Errors met while loading plugins, by file path (or class path for registration clashes)."""
    return dict(_import_errors)


class PluginsLoadResult(NamedTuple):
    plugins: list[type[AirflowPlugin]]
    import_errors: dict[str, str]


def _plugin_files(folder: Path) -> list[Path]:
    files: list[Path] = []
    for path in sorted(folder.rglob("*.py")):
        relative = path.relative_to(folder).parts
        if any(part.startswith(("_", ".")) for part in relative):
            continue
        files.append(path)
    return files


def _import_file(path: Path) -> ModuleType:
    # Airflow imports each plugin file as a top-level module named after the file, so DAG files can
    # `import workday` and get the very classes the plugin registered.
    module_name = path.stem
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    return module


def load_plugins_folder(path: str | Path, *, add_to_sys_path: bool = True) -> PluginsLoadResult:
    """Import every ``.py`` file under *path* (skipping ``_``/``.``-prefixed files and folders).

    A file that fails to import is recorded in the result (and in :func:`plugin_import_errors`) rather
    than raised, so one broken plugin cannot stop the others, or the DAG processor, from loading.
    With *add_to_sys_path* the folder becomes importable, as Airflow's plugins folder is.
    """
    folder = Path(path)
    errors: dict[str, str] = {}
    loaded: list[type[AirflowPlugin]] = []
    if not folder.is_dir():
        return PluginsLoadResult(loaded, errors)
    if add_to_sys_path and str(folder) not in sys.path:
        sys.path.append(str(folder))
    for file_path in _plugin_files(folder):
        before = set(_plugins.values())
        try:
            _import_file(file_path)
        except Exception as exc:
            log.exception("Failed to import plugin %s", file_path)
            errors[str(file_path)] = f"{type(exc).__name__}: {exc}"
            continue
        loaded.extend(cls for cls in _plugins.values() if cls not in before)
    _import_errors.update(errors)
    return PluginsLoadResult(loaded, errors)
