"""``GET /plugins`` and ``GET /plugins/importErrors``: the plugins folder's plugins as Airflow 3.3 lists them.

Read from the store (:mod:`updraft.store.plugins`: the folder as the latest parse's child loaded it); the API
never imports plugin code. Before any parse (or without a plugins folder) both lists are empty, as Airflow's
without plugins. Airflow's rules, kept: plugins sorted by name, each answered in ``PluginResponse``'s fields
(``external_views`` holds the ``appbuilder_menu_items`` too), one that does not fit that shape skipped with a
warning, ``limit``/``offset`` over the valid ones.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from updraft.api.routing import Call, RouteTable
from updraft.model.parse_results import PluginsReport

if TYPE_CHECKING:
    from updraft.api.models import PluginImportErrorCollectionResponse

routes = RouteTable()
log = logging.getLogger(__name__)

LISTS = ("macros", "flask_blueprints", "global_operator_extra_links", "operator_extra_links", "listeners",
         "timetables")
# The keys each dict entry must have (Airflow's response models' required fields).
REQUIRED = {"fastapi_apps": ("app", "url_prefix", "name"), "fastapi_root_middlewares": ("middleware", "name"),
            "external_views": ("name", "href"), "react_apps": ("name", "bundle_url"), "appbuilder_views": (),
            "appbuilder_menu_items": ("name", "href")}


def _response(info: dict[str, Any]) -> dict[str, Any] | None:
    """Airflow's ``PluginResponse`` of one plugin's info; None when it does not fit (Airflow skips it)."""
    if not isinstance(info.get("name"), str) or not all(isinstance(info.get(key), list) for key in (*LISTS, *REQUIRED)):
        return None
    if any(not isinstance(entry, dict) or any(not isinstance(entry.get(key), str) for key in keys)
           for name, keys in REQUIRED.items() for entry in info[name]):
        return None
    out = {key: info[key] for key in ("name", *LISTS, *REQUIRED)}
    out["external_views"] = [*info["external_views"], *info["appbuilder_menu_items"]]
    out["source"] = str(info.get("source"))
    return out


def _report(call: Call) -> PluginsReport:
    return call.store.get_plugins() or PluginsReport()


@routes.get("/plugins")
def get_plugins(call: Call) -> dict[str, Any]:
    limit = call.query.integer("limit", 50, ge=0)
    offset = call.query.integer("offset", 0, ge=0)
    call.query.check()
    valid = []
    for info in sorted(_report(call).plugins, key=lambda p: str(p.get("name"))):
        response = _response(info)
        if response is None:
            log.warning("Skipping invalid plugin %s", info.get("name", "<unknown>"))
            continue
        valid.append(response)
    return {"plugins": valid[offset:offset + limit], "total_entries": len(valid)}


@routes.get("/plugins/importErrors")
def get_plugin_import_errors(call: Call) -> PluginImportErrorCollectionResponse:
    call.query.check()
    errors = _report(call).import_errors
    return {"import_errors": [{"source": source, "error": error} for source, error in errors.items()],
            "total_entries": len(errors)}
