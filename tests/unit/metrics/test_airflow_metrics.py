"""Airflow's metrics as Updraft emits them: Airflow's names and tags, as CloudWatch EMF lines."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from updraft.metrics.airflow import AirflowMetrics
from updraft.metrics.datapoints import read_datapoints
from updraft.metrics.emf import EmfWriter, FileLines
from updraft.metrics.names import AIRFLOW_METRICS, BY_NAME, EMITTED
from updraft.model.records import DagRun, TaskInstance
from updraft.model.states import DagRunState, TaskInstanceState

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


class Lines:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def write(self, line: str) -> None:
        self.lines.append(line)

    def points(self) -> list[tuple[str, float, str, dict[str, str]]]:
        out = []
        for line in self.lines:
            blob = json.loads(line)
            [directive] = blob["_aws"]["CloudWatchMetrics"]
            [[*keys]] = directive["Dimensions"]
            [metric] = directive["Metrics"]
            [value] = blob[metric["Name"]]
            out.append((metric["Name"], value, metric["Unit"], {key: blob[key] for key in keys}))
        return out


@pytest.fixture
def lines() -> Lines:
    return Lines()


@pytest.fixture
def metrics(lines: Lines) -> AirflowMetrics:
    return AirflowMetrics(EmfWriter("Updraft/test", lines))


def _run(run_type: str = "scheduled", **fields) -> DagRun:
    return DagRun("etl", "r1", dag_hash="h", run_type=run_type, state=DagRunState.QUEUED, run_after=T0,
                  queued_at=T0 + dt.timedelta(seconds=1), **fields)


def test_a_scheduled_run_s_first_start_gives_its_schedule_delay_in_milliseconds(metrics, lines) -> None:
    metrics.run_started(_run(), T0 + dt.timedelta(seconds=2.5))
    assert lines.points() == [("dagrun.schedule_delay", 2500.0, "Milliseconds", {"dag_id": "etl"})]


@pytest.mark.parametrize("run", [_run("manual"), _run("backfill"), _run("asset_triggered"),
                                 _run(start_date=T0)], ids=["manual", "backfill", "asset", "restart of a cleared run"])
def test_only_a_scheduled_run_s_first_start_has_a_schedule_delay(metrics, lines, run) -> None:
    metrics.run_started(run, T0 + dt.timedelta(minutes=5))
    assert lines.points() == []


def test_a_run_s_end_gives_its_duration_by_state_and_its_first_task_delays(metrics, lines) -> None:
    run = _run(start_date=T0 + dt.timedelta(seconds=2))
    tis = [TaskInstance("etl", "r1", "a", start_date=T0 + dt.timedelta(seconds=4)),
           TaskInstance("etl", "r1", "b", start_date=T0 + dt.timedelta(seconds=9)), TaskInstance("etl", "r1", "c")]
    metrics.run_finished(run, DagRunState.FAILED, T0 + dt.timedelta(seconds=12), tis)
    assert lines.points() == [
        ("dagrun.duration.failed", 10000.0, "Milliseconds", {"dag_id": "etl"}),
        ("dagrun.first_task_scheduling_delay", 4000.0, "Milliseconds", {"dag_id": "etl"}),
        ("dagrun.first_task_start_delay", 3000.0, "Milliseconds", {"dag_id": "etl"}),
    ]


def test_a_try_s_start_and_end_with_its_state_its_durations_and_its_outcome(metrics, lines) -> None:
    ti = TaskInstance("etl", "r1", "load", state=TaskInstanceState.RUNNING, queued_at=T0,
                      start_date=T0 + dt.timedelta(milliseconds=300))
    metrics.try_started(ti)
    metrics.try_finished(TaskInstance("etl", "r1", "load", state=TaskInstanceState.UP_FOR_RETRY,
                                      start_date=ti.start_date), T0 + dt.timedelta(seconds=2), "BashOperator")
    task = {"dag_id": "etl", "task_id": "load"}
    assert lines.points() == [
        ("ti.start", 1.0, "Count", task),
        ("task.queued_duration", 300.0, "Milliseconds", task),
        ("ti.finish", 1.0, "Count", {**task, "state": "up_for_retry"}),
        ("task.duration", 1700.0, "Milliseconds", task),
        ("ti_failures", 1.0, "Count", {}),  # a failure retried is a failure, as Airflow counts it
        ("operator_failures", 1.0, "Count", {"operator_name": "BashOperator"}),
    ]


def test_the_lines_carry_exactly_airflow_s_tags_not_the_function_s_service(metrics, lines, monkeypatch) -> None:
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "updraft-worker")
    metrics.pool_slots("etl_pool", {"open": 3, "queued": 1, "running": 2, "deferred": 0, "scheduled": 0})
    blob = json.loads(lines.lines[0])
    assert blob["_aws"]["CloudWatchMetrics"][0] == {"Namespace": "Updraft/test", "Dimensions": [["pool_name"]],
                                                    "Metrics": [{"Name": "pool.open_slots", "Unit": "None"}]}
    assert "service" not in blob and blob["pool_name"] == "etl_pool"
    assert [name for name, *_ in lines.points()] == ["pool.open_slots", "pool.queued_slots", "pool.running_slots",
                                                     "pool.deferred_slots", "pool.scheduled_slots"]


def test_a_name_outside_airflow_s_emitted_list_is_refused(metrics) -> None:
    with pytest.raises(ValueError, match="not one of Airflow's metrics"):
        metrics.incr("ti.started")
    with pytest.raises(ValueError):
        metrics.gauge("executor.open_slots", 1)  # Airflow's, but listed as not emitted


def test_every_airflow_metric_is_either_emitted_or_says_why_not() -> None:
    assert len(BY_NAME) == len(AIRFLOW_METRICS) == 128  # Airflow 3.3.2's metrics_template.yaml
    for metric in AIRFLOW_METRICS:
        assert metric.kind in ("counter", "gauge", "timer")
        assert bool(metric.emitted_by) != bool(metric.why_not), metric.name
    assert {"dagrun.duration.success", "dagrun.schedule_delay", "ti.finish", "pool.open_slots",
            "dag_processing.last_duration", "scheduler_heartbeat"} <= EMITTED


def test_nothing_is_written_without_a_destination() -> None:
    AirflowMetrics().incr("ti.start", dag_id="etl", task_id="t")  # no error, no output: a test's scheduler


def test_a_metrics_file_is_read_back_newest_first_filtered(tmp_path: Path) -> None:
    path = tmp_path / "m" / "local.emf"
    metrics = AirflowMetrics(EmfWriter("Updraft", FileLines(path)))
    for task_id, state in (("a", "success"), ("b", "failed"), ("c", "success")):
        metrics.incr("ti.finish", dag_id="etl", task_id=task_id, state=state)
    metrics.incr("scheduler_heartbeat")
    with path.open("a") as handle:
        handle.write("not EMF\n")
    points = read_datapoints(path, names={"ti.finish"}, dimensions={"state": "success"})
    assert [p.dimensions["task_id"] for p in points] == ["c", "a"]
    assert read_datapoints(tmp_path / "missing.emf") == []


def test_a_line_that_cannot_be_written_does_not_fail_the_caller(tmp_path: Path, caplog) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("")
    metrics = AirflowMetrics(EmfWriter("Updraft", FileLines(blocked / "under-a-file.emf")))
    metrics.incr("ti_successes")
    assert "metric ti_successes not written" in caplog.text
