"""The web UI's view data routes (Airflow's private ``/ui/`` routes, under ``/api/v2/ui``): the dashboard's counts
of runs and task instances by state, a DAG's calendar (runs a day by state) and a run's Gantt (every try)."""

from __future__ import annotations

import datetime as dt

import pytest

from updraft.model.records import TIKey
from updraft.model.states import TaskInstanceState


def _trigger(api, run_id, logical_date=None, dag_id="etl"):
    answer = api("POST", f"/api/v2/dags/{dag_id}/dagRuns", body={"dag_run_id": run_id, "logical_date": logical_date})
    assert answer.status == 200, answer.body


@pytest.mark.slow
def test_dashboard_counts_runs_and_their_task_instances_by_state(api, store):
    _trigger(api, "a")
    _trigger(api, "b")
    _trigger(api, "c", dag_id="reporting")
    api("PATCH", "/api/v2/dags/etl/dagRuns/b", body={"state": "failed"})
    answer = api.get("/api/v2/ui/dashboard/historical_metrics_data", query={"start_date": "2000-01-01T00:00:00Z"})
    assert answer.status == 200
    assert answer.body["dag_run_states"] == {"queued": 2, "running": 0, "success": 0, "failed": 1}
    states = answer.body["task_instance_states"]
    # a and c: three instances not started yet; b marked failed: its unfinished instances skipped, as Airflow marks
    assert {state: n for state, n in states.items() if n} == {"no_status": 3, "skipped": 2}
    assert set(states) == {"no_status", "removed", "scheduled", "queued", "running", "success", "restarting", "failed",
                           "up_for_retry", "up_for_reschedule", "upstream_failed", "skipped", "deferred",
                           "awaiting_input"}
    later = api.get("/api/v2/ui/dashboard/historical_metrics_data", query={"start_date": "2999-01-01T00:00:00Z"})
    assert sum(later.body["dag_run_states"].values()) == 0
    assert api.get("/api/v2/ui/dashboard/historical_metrics_data", query={"start_date": "nope"}).status == 422


def test_calendar_counts_a_dag_s_runs_a_day_by_state(api):
    _trigger(api, "d1", "2024-02-01T03:00:00Z")
    _trigger(api, "d2", "2024-02-01T18:00:00Z")
    _trigger(api, "d3", "2024-02-03T00:00:00Z")
    api("PATCH", "/api/v2/dags/etl/dagRuns/d2", body={"state": "success"})
    answer = api.get("/api/v2/ui/calendar/etl")
    assert answer.status == 200
    assert answer.body == {"total_entries": 3, "dag_runs": [
        {"date": "2024-02-01T00:00:00Z", "state": "queued", "count": 1},
        {"date": "2024-02-01T00:00:00Z", "state": "success", "count": 1},
        {"date": "2024-02-03T00:00:00Z", "state": "queued", "count": 1}]}
    hourly = api.get("/api/v2/ui/calendar/etl", query={"granularity": "hourly",
                                                        "logical_date_lte": "2024-02-02T00:00:00Z"})
    assert [(r["date"], r["count"]) for r in hourly.body["dag_runs"]] == [
        ("2024-02-01T03:00:00Z", 1), ("2024-02-01T18:00:00Z", 1)]
    assert api.get("/api/v2/ui/calendar/nope").status == 404
    assert api.get("/api/v2/ui/calendar/etl", query={"granularity": "weekly"}).status == 422


def test_gantt_lists_every_try_of_every_instance(api, store):
    _trigger(api, "g")
    start = dt.datetime(2024, 3, 1, tzinfo=dt.UTC)
    key = TIKey("etl", "g", "extract")
    store.transition_ti(key, expected=[None], state=TaskInstanceState.RUNNING,
                        fields={"try_number": 1, "start_date": start})
    store.record_try(store.get_ti(key))  # try 1 kept in the history, as a retry keeps it
    store.transition_ti(key, expected=[TaskInstanceState.RUNNING], state=TaskInstanceState.SUCCESS,
                        fields={"try_number": 2, "start_date": start + dt.timedelta(minutes=1),
                                "end_date": start + dt.timedelta(minutes=2)})
    answer = api.get("/api/v2/ui/gantt/etl/g")
    assert answer.status == 200 and (answer.body["dag_id"], answer.body["run_id"]) == ("etl", "g")
    rows = [(r["task_id"], r["try_number"], r["state"], r["start_date"], r["end_date"])
            for r in answer.body["task_instances"]]
    assert rows == [("extract", 1, "running", "2024-03-01T00:00:00Z", None),
                    ("extract", 2, "success", "2024-03-01T00:01:00Z", "2024-03-01T00:02:00Z"),
                    ("load", 0, None, None, None)]
    assert api.get("/api/v2/ui/gantt/etl/nope").status == 404
