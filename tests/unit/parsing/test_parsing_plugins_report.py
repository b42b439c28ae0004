"""The parser's child reports the plugins folder as it loaded it (``ParsedFile.plugins``): each plugin in
Airflow's ``get_plugin_info`` shape and each plugin file that failed to import, for ``GET /plugins``."""

from __future__ import annotations

import dataclasses
import textwrap

from tests.unit.parsing.test_parsing_dag_files import OPTIONS, by_file, parse_folder, write

PLUGIN = '''
from airflow.plugins_manager import AirflowPlugin
from airflow.sdk import BaseOperatorLink
from airflow.timetables.trigger import CronTriggerTimetable


def shout(text):
    return text.upper()


class Workdays(CronTriggerTimetable):
    pass


class DocsLink(BaseOperatorLink):
    name = "Docs"

    def get_link(self, operator, *, ti_key):
        return "https://example.com/docs"


class CompanyPlugin(AirflowPlugin):
    name = "company"
    macros = [shout]
    timetables = [Workdays]
    global_operator_extra_links = [DocsLink()]
    external_views = [{"name": "Wiki", "href": "https://wiki.example.com", "destination": "nav"}]
'''


def test_each_parse_reports_the_plugins_and_their_import_errors(tmp_path):
    dags, plugins = tmp_path / "dags", tmp_path / "plugins"
    write(dags, "simple.py", 'DAG("simple", schedule=None, start_date=START)\n')
    write(plugins, "company/plugin.py", PLUGIN, header=False)
    write(plugins, "broken.py", "raise RuntimeError('no database here')\n", header=False)
    parsed = by_file(parse_folder(dags, dataclasses.replace(OPTIONS, plugins_folder=str(plugins))))["simple.py"]
    assert parsed.plugins is not None
    [info] = parsed.plugins.plugins
    assert info["name"] == "company" and info["source"] == "$PLUGINS_FOLDER/company/plugin.py"
    assert info["macros"] == ["plugin.shout"] and info["timetables"] == ["plugin.Workdays"]
    assert info["global_operator_extra_links"] == ["<plugin.DocsLink object>"]
    assert info["external_views"] == [{"name": "Wiki", "href": "https://wiki.example.com", "destination": "nav"}]
    assert info["fastapi_apps"] == [] and info["listeners"] == []
    [(path, error)] = parsed.plugins.import_errors.items()
    assert path.endswith("broken.py") and "no database here" in error


def test_without_a_plugins_folder_the_report_is_empty(tmp_path):
    write(tmp_path, "simple.py", textwrap.dedent('DAG("simple", schedule=None, start_date=START)\n'))
    parsed = by_file(parse_folder(tmp_path))["simple.py"]
    assert parsed.plugins is not None and parsed.plugins.plugins == [] and parsed.plugins.import_errors == {}
