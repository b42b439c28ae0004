"""``GET /api/v2/plugins`` and ``/plugins/importErrors``: the plugins folder as the latest parse loaded it
(stored by registration, read without importing plugin code), answered as Airflow 3.3 answers them."""

from __future__ import annotations

import datetime as dt

from tests.functional.api.conftest import NOW
from updraft.model.parse_results import ParsedFile, PluginsReport
from updraft.scheduling.commands.dag_registration import register_parsed_file

EMPTY = {key: [] for key in ("macros", "flask_blueprints", "fastapi_apps", "fastapi_root_middlewares",
                             "external_views", "react_apps", "appbuilder_views", "appbuilder_menu_items",
                             "global_operator_extra_links", "operator_extra_links", "listeners", "timetables")}


def _plugin(name: str, **parts) -> dict:
    return {**EMPTY, "priority_weight_strategies": [], "name": name, "source": f"$PLUGINS_FOLDER/{name}.py", **parts}


def _parse(store, report: PluginsReport, at: dt.datetime = NOW) -> None:
    register_parsed_file(store, ParsedFile(relative_path="other.py", file_hash="h", plugins=report), now=at)


def test_no_plugins_before_a_parse_loaded_the_folder(api):
    assert api.get("/api/v2/plugins").body == {"plugins": [], "total_entries": 0}
    assert api.get("/api/v2/plugins/importErrors").body == {"import_errors": [], "total_entries": 0}


def test_the_latest_parse_s_plugins_sorted_by_name_in_airflow_s_shape(api, store):
    menu_item = {"name": "Runbook", "href": "https://runbook.example.com", "category": "Docs"}
    _parse(store, PluginsReport(plugins=[
        _plugin("zeta", timetables=["zeta.Workdays"], macros=["zeta.shout"], appbuilder_menu_items=[menu_item],
                external_views=[{"name": "Wiki", "href": "https://wiki.example.com", "destination": "nav"}]),
        _plugin("alpha", operator_extra_links=["<alpha.DocsLink object>"]),
        _plugin("broken", fastapi_apps=[{"name": "no app"}]),  # no app nor url_prefix: Airflow skips it
    ], import_errors={"/plugins/bad.py": "RuntimeError: no database here"}))
    body = api.get("/api/v2/plugins").body
    assert body["total_entries"] == 2 and [p["name"] for p in body["plugins"]] == ["alpha", "zeta"]
    zeta = body["plugins"][1]
    assert zeta["external_views"] == [{"name": "Wiki", "href": "https://wiki.example.com", "destination": "nav"},
                                      menu_item]  # the menu items too, as Airflow's response
    assert zeta["timetables"] == ["zeta.Workdays"] and zeta["source"] == "$PLUGINS_FOLDER/zeta.py"
    assert "priority_weight_strategies" not in zeta  # not a field of Airflow's response
    assert [p["name"] for p in api.get("/api/v2/plugins", query={"limit": 1, "offset": 1}).body["plugins"]] == ["zeta"]
    assert api.get("/api/v2/plugins/importErrors").body == {
        "import_errors": [{"source": "/plugins/bad.py", "error": "RuntimeError: no database here"}],
        "total_entries": 1}

    _parse(store, PluginsReport(), NOW + dt.timedelta(minutes=1))  # the folder emptied: the next parse says so
    assert api.get("/api/v2/plugins").body == {"plugins": [], "total_entries": 0}


def test_a_parse_of_an_unchanged_folder_writes_nothing(store):
    report = PluginsReport(plugins=[_plugin("alpha")])
    assert store.record_plugins(report, NOW) is True
    assert store.record_plugins(PluginsReport(plugins=[_plugin("alpha")]), NOW + dt.timedelta(minutes=1)) is False
    assert store.get_plugins() == report
