"""The REST API on a DAG whose custom timetable it cannot load: Airflow's example AfterWorkdayTimetable answers
through the parser's evaluation stored on the DAG's row (next run, manual data intervals), and a manual run at a
date the parser did not evaluate is a 400 naming why."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pendulum
import pytest

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG
from tests.functional.api.conftest import NOW
from updraft.model.parse_results import HORIZON_KEY, ParsedFile
from updraft.scheduling.commands.dag_registration import register_parsed_file
from updraft.serialization import serialize_dag
from updraft.timetables import TimeRestriction
from updraft.timetables.evaluated import evaluate_horizon

WORKDAY_FILE = Path(__file__).parents[1] / "airflow_examples" / "plugins" / "workday.py"
START = pendulum.datetime(2024, 2, 1, tz="UTC")


def _workday_timetable():
    """The example plugin's class, loaded by this test alone (the API process never has it)."""
    spec = importlib.util.spec_from_file_location("api_test_workday_plugin", WORKDAY_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.AfterWorkdayTimetable()


@pytest.fixture
def workdays(store, isolated_plugins):
    """What the parser stores for a file whose DAG runs on the workday timetable (evaluated in its child). Its
    plugin, registered while the file loads, leaves the registry with the test."""
    live = _workday_timetable()
    with DAG("workdays", schedule="@daily", start_date=START, catchup=True) as dag:
        EmptyOperator(task_id="t")
    doc = serialize_dag(dag, relative_fileloc="workdays.py", file_hash="w")
    doc["dag"]["timetable"] = {"__type": "never_loaded.AfterWorkdayTimetable", "__var": {}}
    doc["dag"]["timetable_summary"] = live.summary
    doc[HORIZON_KEY] = evaluate_horizon(live, TimeRestriction(START, None, True), anchor=None, now=NOW).to_dict()
    register_parsed_file(store, ParsedFile(relative_path="workdays.py", file_hash="w", dags=[doc]), now=NOW)
    return live


def test_next_run_and_summary_come_from_the_evaluation(api, workdays):
    body = api.get("/api/v2/dags/workdays").body
    # Airflow's first run from a Thursday start: that Thursday's interval, run at midnight after it.
    assert (body["next_dagrun_logical_date"], body["next_dagrun_run_after"]) == (
        "2024-02-01T00:00:00Z", "2024-02-02T00:00:00Z")
    assert body["timetable_summary"] == "AfterWorkdayTimetable"


def test_manual_run_interval_is_airflows_where_evaluated_and_a_400_where_not(api, workdays):
    monday = pendulum.datetime(2024, 2, 12, 9, tz="UTC")  # a Monday: the data interval is the Friday before
    answer = api("POST", "/api/v2/dags/workdays/dagRuns", body={"logical_date": monday.isoformat()})
    assert answer.status == 200, answer.body
    expected = workdays.infer_manual_data_interval(run_after=monday)
    assert (answer.body["data_interval_start"], answer.body["data_interval_end"]) == (
        expected.start.isoformat().replace("+00:00", "Z"), expected.end.isoformat().replace("+00:00", "Z"))
    far = api("POST", "/api/v2/dags/workdays/dagRuns", body={"logical_date": "2035-01-01T00:00:00Z"})
    assert far.status == 400 and "not evaluated for a manual run" in far.body["detail"]


def test_a_backfill_is_refused_naming_why(api, workdays):
    answer = api("POST", "/api/v2/backfills", body={"dag_id": "workdays", "from_date": "2024-01-01T00:00:00Z",
                                                     "to_date": "2024-01-10T00:00:00Z"})
    assert answer.status in (400, 409, 422) and "custom timetable" in answer.body["detail"]
