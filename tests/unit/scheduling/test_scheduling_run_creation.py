"""Which scheduled runs are due: catchup, end_date, max_active_runs, the per-loop cap, deterministic run ids."""

from __future__ import annotations

import datetime as dt

from helpers import START, serialized

from airflow.sdk import DAG, task
from updraft.scheduling.run_creation import manual_run_info, next_run_info, next_runs, run_id_for
from updraft.store.api import DagMeta
from updraft.timetables.base import DataInterval
from updraft.timetables.interval import DeltaDataIntervalTimetable

DAY = dt.timedelta(days=1)
NOW = START + dt.timedelta(days=5, hours=12)  # 2024-01-06 12:00


def _dag(schedule="@daily", **kwargs):
    with DAG("d", schedule=schedule, start_date=START, **kwargs) as dag:
        @task
        def work():
            return None

        work()
    return serialized(dag)


def _dates(infos):
    return [i.logical_date.date().isoformat() for i in infos]


def test_catchup_creates_every_missed_interval_oldest_first():
    dag = _dag("@daily", catchup=True, max_active_runs=16)
    runs = next_runs(dag, None, now=NOW, active_runs=0)
    assert _dates(runs) == ["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04", "2024-01-05",
                            "2024-01-06"]


def test_without_catchup_only_the_latest_run_is_created():
    dag = _dag("@daily", catchup=False)
    assert _dates(next_runs(dag, None, now=NOW, active_runs=0)) == ["2024-01-06"]


def test_interval_schedules_run_after_their_interval_ends():
    dag = _dag(DeltaDataIntervalTimetable(DAY), catchup=True)
    runs = next_runs(dag, None, now=NOW, active_runs=0)
    assert _dates(runs) == ["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04", "2024-01-05"]
    assert runs[0].run_after == START + DAY and runs[0].data_interval == DataInterval(START, START + DAY)


def test_creation_continues_after_the_last_automated_interval():
    dag = _dag("@daily", catchup=True)
    last = DataInterval(START + 3 * DAY, START + 3 * DAY)
    assert _dates(next_runs(dag, last, now=NOW, active_runs=0)) == ["2024-01-05", "2024-01-06"]
    meta = DagMeta(dag_id="d", relative_fileloc="d.py", dag_hash="h",
                   last_automated_data_interval_start=last.start, last_automated_data_interval_end=last.end)
    assert _dates(next_runs(dag, meta, now=NOW, active_runs=0)) == ["2024-01-05", "2024-01-06"]


def test_max_active_runs_and_the_per_loop_cap():
    dag = _dag("@daily", catchup=True, max_active_runs=3)
    assert len(next_runs(dag, None, now=NOW, active_runs=0)) == 3
    assert len(next_runs(dag, None, now=NOW, active_runs=2)) == 1
    assert next_runs(dag, None, now=NOW, active_runs=3) == []
    assert len(next_runs(_dag("@daily", catchup=True), None, now=NOW, active_runs=0, max_to_create=2)) == 2


def test_end_date_stops_creation():
    dag = _dag("@daily", catchup=True, end_date=START + 2 * DAY)
    assert _dates(next_runs(dag, None, now=NOW, active_runs=0)) == ["2024-01-01", "2024-01-02", "2024-01-03"]
    assert next_run_info(dag, DataInterval(START + 2 * DAY, START + 2 * DAY), now=NOW) is None


def test_nothing_is_due_before_its_time_and_unscheduled_dags_never_are():
    dag = _dag("@daily", catchup=True)
    assert next_runs(dag, None, now=START - DAY, active_runs=0) == []
    assert next_runs(_dag(None), None, now=NOW, active_runs=0) == []


def test_a_scheduled_run_id_derives_from_its_logical_date():
    dag = _dag("@daily", catchup=True)
    first, second = next_runs(dag, None, now=NOW, active_runs=0)[:2]
    assert run_id_for(dag, first) == "scheduled__2024-01-01T00:00:00+00:00"
    again = next_runs(dag, None, now=NOW + DAY, active_runs=0)[0]
    assert run_id_for(dag, again) == run_id_for(dag, first) != run_id_for(dag, second)


def test_manual_run_info_infers_the_data_interval():
    daily = _dag(DeltaDataIntervalTimetable(DAY))
    info = manual_run_info(daily, run_after=NOW)
    assert info.run_after == NOW
    assert info.data_interval == DataInterval(NOW - DAY, NOW)  # the interval that ended at the trigger time
    unscheduled = manual_run_info(_dag(None), run_after=NOW, logical_date=START)
    assert unscheduled.data_interval == DataInterval(START, START)
