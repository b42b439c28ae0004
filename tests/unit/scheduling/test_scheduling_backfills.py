"""A backfill's pure decisions: the plan (Airflow's _get_info_list), the reprocess rule, the next step."""

from __future__ import annotations

import dataclasses
import datetime as dt

from helpers import START, make_run, serialized

from airflow.sdk import DAG, task
from updraft.model.backfills import Backfill, ReprocessBehavior, SkipReason
from updraft.model.states import DagRunState
from updraft.scheduling.decisions.backfills import (
    backfill_run,
    infos_between,
    latest_by_date,
    next_step,
    plan,
    run_id_for,
    skip_reason,
)

DAY = dt.timedelta(days=1)
NOW = START + dt.timedelta(days=5, hours=12)  # 2024-01-06 12:00


def _dag(schedule="@daily"):
    with DAG("d", schedule=schedule, start_date=START + 100 * DAY) as dag:
        @task
        def work():
            return None

        work()
    return serialized(dag)


def _days(infos):
    return [i.logical_date.day for i in infos]


def _backfill(**over):
    fields = {"id": 1, "dag_id": "d", "from_date": START, "to_date": START + 9 * DAY, "dag_hash": "h",
              "created_at": NOW, "updated_at": NOW, "max_active_runs": 2}
    return Backfill(**{**fields, **over})


def test_the_range_ignores_start_date_and_catchup_and_stops_at_intervals_not_yet_over():
    # Airflow iterates the timetable between the dates with catchup on, whatever the DAG's start date says.
    assert _days(infos_between(_dag(), START, START + 9 * DAY, now=NOW)) == [1, 2, 3, 4, 5, 6]
    assert _days(infos_between(_dag(), START, START + 9 * DAY, now=NOW, reverse=True)) == [6, 5, 4, 3, 2, 1]
    interval = _dag("@hourly")  # only intervals that ended before now
    hours = infos_between(interval, START, START + 3 * DAY, now=START + dt.timedelta(hours=3))
    assert [i.logical_date.hour for i in hours] == [0, 1, 2]


def test_the_plan_is_recomputed_alike_and_leaves_out_skipped_dates():
    backfill = _backfill(skipped={(START + DAY).isoformat(): "already exists"}, run_backwards=True)
    assert _days(plan(_dag(), backfill)) == [6, 5, 4, 3, 1]
    # listed once per process: every tick asks again, and a long range takes the timetable seconds to list
    assert plan(_dag(), backfill) is plan(_dag(), dataclasses.replace(backfill))
    assert _days(plan(_dag(), dataclasses.replace(backfill, skipped={}))) == [6, 5, 4, 3, 2, 1]


def test_reprocess_behavior_decides_what_an_existing_run_means():
    running, failed, success = (make_run(state=s) for s in (DagRunState.RUNNING, DagRunState.FAILED,
                                                              DagRunState.SUCCESS))
    for reprocess in ReprocessBehavior:
        assert skip_reason(running, reprocess) == SkipReason.IN_FLIGHT
    assert skip_reason(failed, ReprocessBehavior.NONE) == SkipReason.ALREADY_EXISTS
    assert skip_reason(success, ReprocessBehavior.FAILED) == SkipReason.ALREADY_EXISTS
    assert skip_reason(failed, ReprocessBehavior.FAILED) is None
    assert skip_reason(success, ReprocessBehavior.COMPLETED) is None


def test_the_latest_run_of_a_date_is_the_last_started():
    day = START
    old = dataclasses.replace(make_run(run_id="a", state=DagRunState.FAILED), logical_date=day, start_date=day)
    new = dataclasses.replace(make_run(run_id="b", state=DagRunState.SUCCESS), logical_date=day,
                              start_date=day + DAY)
    never = dataclasses.replace(make_run(run_id="c", state=DagRunState.QUEUED), logical_date=day, start_date=None)
    assert latest_by_date([new, never, old])[day.isoformat()].run_id == "b"


def test_next_step_keeps_max_active_runs_and_pauses_and_completes():
    planned = infos_between(_dag(), START, START + 9 * DAY, now=NOW)
    assert _days(next_step(_backfill(), planned, active_runs=0).create) == [1, 2]
    assert _days(next_step(_backfill(created=2), planned, active_runs=1).create) == [3]
    assert next_step(_backfill(created=2), planned, active_runs=2).create == []
    assert next_step(_backfill(is_paused=True), planned, active_runs=0).create == []
    assert next_step(_backfill(created=6), planned, active_runs=1) == next_step(_backfill(), [], active_runs=1)
    assert next_step(_backfill(created=6), planned, active_runs=0).complete
    assert not next_step(_backfill(completed_at=NOW), [], active_runs=0).complete  # completed once only


def test_a_backfill_run_is_named_and_pinned_as_airflow_names_it():
    info = infos_between(_dag(), START, START, now=NOW)[0]
    run = backfill_run(_backfill(dag_run_conf={"x": 1}), info, now=NOW)
    assert run.run_id == run_id_for(info) == "backfill__2024-01-01T00:00:00+00:00"
    assert (run.run_type, run.state, run.dag_hash, run.conf, run.logical_date) == (
        "backfill", DagRunState.QUEUED, "h", {"x": 1}, START)
