"""``updraft local``: a DAG's runs produce Airflow's metrics by Airflow's names, as the functions' EMF lines in
``$UPDRAFT_HOME/metrics/<environment>.emf``, and ``GET /api/updraft/metrics`` answers them; each run and its tries
are one X-Ray trace (``$UPDRAFT_HOME/traces/<environment>.xray``), which X-Ray (the embedded AWS's) assembles."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from pathlib import Path

import boto3
import pytest
from local_helpers import eventually, now, write_dag

from updraft.scheduling.commands.dag_registration import set_paused
from updraft.scheduling.commands.triggering import trigger_dag

pytestmark = pytest.mark.slow

METERED = """
    from datetime import datetime, timedelta
    from airflow.sdk import DAG
    from airflow.providers.standard.operators.python import PythonOperator

    with DAG("metered", schedule=timedelta(hours=1), start_date=datetime(2024, 1, 1), catchup=False):
        PythonOperator(task_id="first", python_callable=lambda: 1) >> PythonOperator(task_id="second",
                                                                                    python_callable=lambda: 2)
"""

BROKEN = """
    from datetime import datetime
    from airflow.sdk import DAG
    from airflow.providers.standard.operators.python import PythonOperator

    def fail():
        raise ValueError("no")

    with DAG("broken", schedule=None, start_date=datetime(2024, 1, 1), catchup=False):
        PythonOperator(task_id="fails", python_callable=fail, retries=0)
"""


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _points(path: Path) -> dict[str, list[dict]]:
    """Metric name -> the dimensions of each of its data points (with ``_value``), checking each line is EMF."""
    out: dict[str, list[dict]] = {}
    for blob in _lines(path):
        [directive] = blob["_aws"]["CloudWatchMetrics"]
        assert directive["Namespace"] == "Updraft"
        keys = [key for dimension_set in directive["Dimensions"] for key in dimension_set]
        for metric in directive["Metrics"]:
            for value in blob[metric["Name"]]:  # Powertools writes a list of values
                out.setdefault(metric["Name"], []).append({**{k: blob[k] for k in keys}, "_value": value,
                                                           "_unit": metric["Unit"]})
    return out


def _finished(store, dag_id: str) -> list:
    return [r for r in store.list_runs(dag_id) if r.state.value in ("success", "failed")]


def test_a_local_run_produces_airflow_s_metric_names_and_one_trace_per_run(tmp_path: Path, start_system, updraft_home: Path) -> None:
    dags = tmp_path / "dags"
    dags.mkdir()
    write_dag(dags, "metered.py", METERED)
    write_dag(dags, "broken.py", BROKEN)
    system = start_system(dags, unpause_new_dags=True)
    store = system.services.store
    eventually(lambda: store.get_dag_meta("broken"), timeout=30)
    set_paused(store, "broken", False)
    run = trigger_dag(store, "broken", now=now())
    system.services.nudge_scheduler("broken", run.run_id)
    [scheduled] = eventually(lambda: _finished(store, "metered"), timeout=60)
    assert scheduled.run_type == "scheduled" and scheduled.state.value == "success"
    eventually(lambda: _finished(store, "broken"), timeout=60)

    path = updraft_home / "metrics" / f"{system.names.environment}.emf"
    # A function writes its metrics when its invocation ends, after the state writes the test waited for, and
    # each data point is a line of its own: wait for the last line of every call the asserts below read (a run's
    # end writes its duration, then its first task's delays; a try's end its finish, duration, then outcomes).
    expected = {"pool.open_slots", "dagrun.duration.success", "dagrun.duration.failed", "dagrun.schedule_delay",
                "dag_processing.last_duration"}

    counts = {"ti.finish": 3, "task.duration": 3, "task.queued_duration": 3, "ti_successes": 2, "ti_failures": 1,
              "operator_successes": 2}

    def written(found: dict[str, list[dict]]) -> bool:
        return (expected <= found.keys() and all(len(found.get(name, ())) == n for name, n in counts.items())
                and {p["dag_id"] for p in found.get("dagrun.first_task_start_delay", ())} == {"metered", "broken"})

    points = eventually(lambda: (found := _points(path)) and written(found) and found, timeout=30)
    # Runs (the scheduler): Airflow's names, the DAG as the dimension, timers in milliseconds.
    assert {"dag_id": "metered", "_unit": "Milliseconds"}.items() <= points["dagrun.duration.success"][0].items()
    assert [p["dag_id"] for p in points["dagrun.duration.failed"]] == ["broken"]
    assert [p["dag_id"] for p in points["dagrun.schedule_delay"]] == ["metered"]  # scheduled runs only
    assert points["dagrun.schedule_delay"][0]["_value"] > 0
    assert {p["dag_id"] for p in points["dagrun.first_task_start_delay"]} == {"metered", "broken"}
    # Tries (the workers): started and finished, with their state, durations and outcome counters.
    assert sorted((p["dag_id"], p["task_id"]) for p in points["ti.start"]) == [
        ("broken", "fails"), ("metered", "first"), ("metered", "second")]
    assert sorted((p["task_id"], p["state"]) for p in points["ti.finish"]) == [
        ("fails", "failed"), ("first", "success"), ("second", "success")]
    assert sorted(p["task_id"] for p in points["task.duration"]) == ["fails", "first", "second"]
    assert len(points["task.queued_duration"]) == 3
    assert len(points["ti_successes"]) == 2 and len(points["ti_failures"]) == 1
    assert {p["operator_name"] for p in points["operator_successes"]} == {"PythonOperator"}
    # The tick (scheduler function) and the parse (parser function).
    assert points["scheduler_heartbeat"] and points["scheduler.scheduler_loop_duration"]
    assert "scheduler.dagruns.running" in points and "scheduler.tasks.executable" in points
    # A tick's count of default_pool: its 128 slots, open or held by a try (one may be running at that tick).
    first = {state: next(p["_value"] for p in points[f"pool.{state}_slots"] if p["pool_name"] == "default_pool")
             for state in ("open", "queued", "running", "deferred", "scheduled")}
    assert sum(first.values()) == 128, first
    assert {p["file_name"] for p in points["dag_processing.last_duration"]} >= {"metered.py", "broken.py"}
    assert points["dag_processor_heartbeat"] and points["dagbag_size"]
    assert points["dag_processing.import_errors"][-1]["_value"] == 0
    # The handlers' own metrics, as their functions print them (with their service dimension), in the same file.
    assert {p["service"] for p in points["TriesRun"]} == {"updraft-worker"}
    assert "RunsCreated" in points and "DagFilesParsed" in points

    # The UI reads them back from local mode's API, filtered by name and dimension, newest first.
    query = urllib.parse.urlencode([("name", "ti.finish"), ("dag_id", "metered"), ("limit", "1")])
    with urllib.request.urlopen(f"{system.api.url}/api/updraft/metrics?{query}", timeout=30) as response:
        answer = json.load(response)
    assert answer["source"] == "file" and answer["total_entries"] == 2
    [latest] = answer["datapoints"]
    assert latest["name"] == "ti.finish" and latest["dimensions"] == {"dag_id": "metered", "task_id": "second",
                                                                      "state": "success"}

    # The traces: one per run, its segment the run, each try under it with its claim-to-start and mini scheduler.
    docs = [json.loads(line) for line in (updraft_home / "traces" / f"{system.names.environment}.xray")
            .read_text().splitlines()]
    [run_segment] = [d for d in docs if d["name"] == "metered" and "parent_id" not in d]
    assert run_segment["annotations"] == {"dag_id": "metered", "run_id": scheduled.run_id, "run_type": "scheduled",
                                          "state": "success"}
    in_run = [d for d in docs if d["trace_id"] == run_segment["trace_id"]]
    tries = {d["name"]: d for d in in_run if d.get("parent_id") == run_segment["id"]}
    assert set(tries) == {"queued", "first", "second"}
    assert tries["first"]["end_time"] <= tries["second"]["start_time"]
    for task in ("first", "second"):
        children = {d["name"] for d in in_run if d.get("parent_id") == tries[task]["id"]}
        assert children == {"claim to start", "mini scheduler"}, task
    # X-Ray records them as one trace (the embedded AWS's X-Ray, as the daemon would send them).
    xray = boto3.client("xray", endpoint_url=system.server.url, region_name=system.names.region)
    answer = xray.put_trace_segments(TraceSegmentDocuments=[json.dumps(d) for d in in_run])
    assert answer["UnprocessedTraceSegments"] == []
    [trace] = xray.batch_get_traces(TraceIds=[run_segment["trace_id"]])["Traces"]
    assert len(trace["Segments"]) == len(in_run) == 8


def test_an_environment_started_after_another_in_the_process_counts_its_pools_at_once(
        tmp_path: Path, start_system, updraft_home: Path) -> None:
    """The pool gauges' period (one count a minute per container) belongs to the environment's services: a local
    system started in a process where another just ran counts its own pools at its first tick, not a minute on."""
    dags = tmp_path / "dags"
    dags.mkdir()
    first = start_system(dags)
    path = updraft_home / "metrics" / f"{first.names.environment}.emf"
    eventually(lambda: "pool.open_slots" in _points(path), timeout=30)
    first.stop()
    counted = len(_points(path)["pool.open_slots"])
    start_system(dags)
    eventually(lambda: len(_points(path).get("pool.open_slots", [])) > counted, timeout=30)
