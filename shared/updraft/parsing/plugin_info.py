"""One plugin as Airflow's ``plugins_manager.get_plugin_info`` dumps it, for ``GET /plugins``: the parser writes it
when it loads the plugins folder, so the API shows plugins without importing their code.

Here, above the registry (``updraft.plugins``): naming objects by dotted path is the SDK's
(``updraft.sdk.module_loading``), and the registry sits below the SDK, which asks it for plugin timetables,
priority strategies and extra links.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from updraft.plugins import AirflowPlugin
from updraft.sdk.module_loading import qualname as _qualname


def _plain(value: Any) -> Any:
    """A declared entry's value as JSON: strings, numbers, booleans and None as they are, anything else its text."""
    return value if value is None or isinstance(value, (str, int, float, bool)) else str(value)


def _entries(entries: list[Any], objects: tuple[str, ...] = (), hidden: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """Dict entries (views, apps, menu items) as JSON: each key in ``objects`` named by its class (Airflow shows
    an app or a view by class), each in ``hidden`` left out (a middleware's args may hold secrets)."""
    return [{key: _qualname(value) if key in objects else _plain(value) for key, value in entry.items()
             if key not in hidden} for entry in entries if isinstance(entry, dict)]


def plugin_info(cls: type[AirflowPlugin], folder: str | Path) -> dict[str, Any]:
    """One plugin as Airflow's ``plugins_manager.get_plugin_info`` dumps it (JSON only: the API shows it without
    importing plugin code): callables and classes by dotted path, links as ``<Class object>``, views and apps as
    their dicts with the object named by class, and ``source`` as Airflow's ``$PLUGINS_FOLDER/<path>``."""
    module = sys.modules.get(cls.__module__)
    file = getattr(module, "__file__", None)
    source = f"$PLUGINS_FOLDER/{Path(file).resolve().relative_to(Path(folder).resolve()).as_posix()}" if file and \
        Path(file).resolve().is_relative_to(Path(folder).resolve()) else _qualname(cls)
    return {
        "name": cls.name, "source": source,
        **{attr: [_qualname(o) for o in getattr(cls, attr)] for attr in ("macros", "timetables",
                                                                          "priority_weight_strategies")},
        "listeners": [o.__name__ if isinstance(o, ModuleType) else _qualname(o) for o in cls.listeners],
        **{attr: [f"<{_qualname(type(o))} object>" for o in getattr(cls, attr)]
           for attr in ("global_operator_extra_links", "operator_extra_links")},
        "flask_blueprints": [f"<{_qualname(type(b))}: name={getattr(b, 'name', None)!r} "
                             f"import_name={getattr(b, 'import_name', None)!r}>" for b in cls.flask_blueprints],
        "fastapi_apps": _entries(cls.fastapi_apps, objects=("app",)),
        "fastapi_root_middlewares": _entries(cls.fastapi_root_middlewares, objects=("middleware",),
                                             hidden=("args", "kwargs")),
        "appbuilder_views": _entries(cls.appbuilder_views, objects=("view",)),
        **{attr: _entries(getattr(cls, attr)) for attr in ("external_views", "react_apps", "appbuilder_menu_items")},
    }
