"""Partitioned asset events trigger partitioned consumers, one run per downstream partition key (Airflow 3.3's
``AssetManager._queue_partitioned_dags`` and the scheduler's ``_create_dagruns_for_partitioned_asset_dags``), with
schedulers racing over the same pending partitions. One moto store for the module: each test names its own DAGs.
"""

from __future__ import annotations

import datetime as dt
import threading

import pytest
from moto import mock_aws

from airflow.sdk import (
    DAG,
    Asset,
    CronPartitionTimetable,
    FanOutMapper,
    FixedKeyMapper,
    MinimumCount,
    PartitionedAssetTimetable,
    PartitionedAtRuntime,
    RollupMapper,
    SegmentWindow,
    StartOfHourMapper,
    StartOfWeekMapper,
    WeekWindow,
    task,
)
from tests.functional.scheduling.harness import START, Clock, make_store, store_dags
from updraft.executors.recording import RecordingExecutor
from updraft.model.records import TIKey
from updraft.runtime.assets import OutletEventAccessors, outlet_event_specs
from updraft.scheduling.asset_events import publish_outlet_events, record_asset_event
from updraft.scheduling.asset_triggers import create_asset_triggered_runs
from updraft.scheduling.commands.backfill_commands import BackfillRequest, InvalidBackfill, dry_run
from updraft.scheduling.dag_versions import pinned_dag
from updraft.scheduling.pass_report import PassReport
from updraft.scheduling.run_creation import next_runs, scheduled_run
from updraft.scheduling.scheduler import Scheduler

SCHEDULERS = 3


@pytest.fixture(scope="module")
def env():
    with mock_aws():
        yield make_store(), Clock()


def _dag(dag_id: str, schedule) -> DAG:
    with DAG(dag_id, schedule=schedule, start_date=START) as dag:
        @task
        def noop():
            return None

        noop()
    return dag


def _emit(store, clock, name: str, key: str | None, source: str) -> set[str]:
    clock.advance(seconds=1)
    return record_asset_event(store, name=name, uri=name, source=source, timestamp=clock(), partition_key=key)[1]


def _runs(store, dag_id: str) -> list:
    return sorted((r for r in store.list_runs(dag_id) if r.run_type == "asset_triggered"),
                  key=lambda r: r.partition_key)


def _dag_for(store):
    return lambda dag_id, dag_hash: pinned_dag(store, dag_id, dag_hash)


def test_aligned_hourly_partitions_make_one_run_per_hour_and_plain_dags_ignore_them(env):
    store, clock = env
    store_dags(store, _dag("combine", PartitionedAssetTimetable(
        assets=Asset("team_a") & Asset("team_b"), default_partition_mapper=StartOfHourMapper())),
        _dag("plain", Asset("team_a")), now=clock())
    assert _emit(store, clock, "team_a", "2024-03-05T10:15:00", "a1") == {"combine"}  # not "plain": it is keyed
    assert _emit(store, clock, "team_a", "2024-03-05T11:00:00", "a2") == {"combine"}
    assert create_asset_triggered_runs(store, _dag_for(store), now=clock()) == []  # team_b not there yet
    _emit(store, clock, "team_b", "2024-03-05T10:45:00", "b1")
    [run] = create_asset_triggered_runs(store, _dag_for(store), now=clock())
    assert (run.dag_id, run.partition_key) == ("combine", "2024-03-05T10")
    assert run.partition_date == dt.datetime(2024, 3, 5, 10, tzinfo=dt.UTC) and run.logical_date is None
    assert {e.partition_key for e in store.get_triggering_events("combine", run.run_id)} == {
        "2024-03-05T10:15:00", "2024-03-05T10:45:00"}
    assert create_asset_triggered_runs(store, _dag_for(store), now=clock()) == []  # once
    assert [p.partition_key for p in store.pending_partitions("combine")] == ["2024-03-05T11"]
    # a plain event still runs the plain DAG, and reaches no partitioned one
    assert _emit(store, clock, "team_a", None, "a3") == {"plain"}
    assert [r.dag_id for r in create_asset_triggered_runs(store, _dag_for(store), now=clock())] == ["plain"]


def test_segment_rollup_waits_for_its_policy_and_fan_out_makes_a_run_per_member(env):
    store, clock = env
    store_dags(store, _dag("all_regions", PartitionedAssetTimetable(
        assets=Asset("regions"), default_partition_mapper=RollupMapper(
            upstream_mapper=FixedKeyMapper("all"), window=SegmentWindow(["us", "eu", "apac"])))),
        _dag("two_regions", PartitionedAssetTimetable(
            assets=Asset("regions"), default_partition_mapper=RollupMapper(
                upstream_mapper=FixedKeyMapper("all"), window=SegmentWindow(["us", "eu", "apac"]),
                wait_policy=MinimumCount(2)))),
        _dag("daily", PartitionedAssetTimetable(assets=Asset("weekly"), default_partition_mapper=FanOutMapper(
            upstream_mapper=StartOfWeekMapper(), window=WeekWindow()))), now=clock())
    _emit(store, clock, "regions", "us", "r1")
    _emit(store, clock, "regions", "eu", "r2")
    assert [r.dag_id for r in create_asset_triggered_runs(store, _dag_for(store), now=clock())] == ["two_regions"]
    _emit(store, clock, "regions", "apac", "r3")
    runs = create_asset_triggered_runs(store, _dag_for(store), now=clock())
    assert [(r.dag_id, r.partition_key) for r in runs] == [("all_regions", "all")]
    assert len(store.get_triggering_events("all_regions", runs[0].run_id)) == 3
    _emit(store, clock, "weekly", "2024-03-13T10:00:00", "w1")
    created = create_asset_triggered_runs(store, _dag_for(store), now=clock(), dag_ids=["daily"])
    assert sorted(r.partition_key for r in created) == [f"2024-03-{d:02d}" for d in range(11, 18)]
    assert len({r.run_id for r in created}) == 7


def test_racing_schedulers_make_each_partition_run_once(env, serialized_moto):
    store, clock = env
    store_dags(store, _dag("raced", PartitionedAssetTimetable(assets=Asset("raw"))), now=clock())
    stop = threading.Event()
    errors: list[BaseException] = []

    def scheduler_loop() -> None:
        try:
            while not stop.is_set():
                create_asset_triggered_runs(store, _dag_for(store), now=clock(), dag_ids=["raced"])
                stop.wait(0.002)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=scheduler_loop) for _ in range(SCHEDULERS)]
    for t in threads:
        t.start()
    try:
        for i in range(6):
            _emit(store, clock, "raw", f"k{i % 3}", f"raw{i}")  # each key twice
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not errors, errors
    create_asset_triggered_runs(store, _dag_for(store), now=clock())  # settle
    runs = _runs(store, "raced")
    assert {r.partition_key for r in runs} == {"k0", "k1", "k2"}
    seen = [e.ref for r in runs for e in store.get_triggering_events("raced", r.run_id)]
    assert len(seen) == len(set(seen)) == 6  # every event in exactly one run
    assert store.pending_partitions("raced") == []
    # a claimer that dies before creating the run: the next pass finishes its claim, under the claimed id
    _emit(store, clock, "raw", "k9", "raw9")
    [pending] = store.pending_partitions("raced")
    assert store.claim_partition(pending, run_id="asset_triggered__lost", run_after=clock(), logs=pending.logs)
    assert store.claim_partition(pending, run_id="asset_triggered__other", run_after=clock(), logs=pending.logs) is None
    [run] = create_asset_triggered_runs(store, _dag_for(store), now=clock(), dag_ids=["raced"])
    assert (run.run_id, run.partition_key) == ("asset_triggered__lost", "k9")
    assert store.pending_partitions("raced") == []


def test_cron_partition_runs_and_runtime_partition_keys(env):
    store, clock = env
    dag = _dag("hourly", CronPartitionTimetable("15 * * * *", timezone="UTC"))
    store_dags(store, dag, now=clock())
    sdag = pinned_dag(store, "hourly", store.get_dag_meta("hourly").dag_hash)
    now = dt.datetime(2024, 3, 5, 10, 16, tzinfo=dt.UTC)
    [info] = next_runs(sdag, None, now=now, active_runs=0)
    run = scheduled_run(sdag, "h", info, now=now)
    assert (run.partition_key, run.logical_date) == ("2024-03-05T10:15:00", None)
    assert run.partition_date == dt.datetime(2024, 3, 5, 10, 15, tzinfo=dt.UTC)
    assert run.run_id == "scheduled__2024-03-05T10:15:00+00:00__2024-03-05T10:15:00"
    scheduler = Scheduler(store, RecordingExecutor(), clock=clock)
    scheduler.create_due_runs(PassReport())  # the scheduler's clock run, at the latest fire time before now
    [due] = store.list_runs("hourly")
    assert (due.run_type, due.logical_date, due.data_interval_start) == ("scheduled", None, None)
    assert due.partition_key == due.partition_date.strftime("%Y-%m-%dT%H:%M:%S") == due.run_id.rsplit("__", 1)[1]
    with pytest.raises(InvalidBackfill, match="partitioned schedule"):  # not backfilled by logical date
        dry_run(store, BackfillRequest("hourly", START, START + dt.timedelta(days=1)), now=clock())

    # the run's task emits its outlet for the run's partition, with its date; an identity consumer carries both
    store_dags(store, _dag("hourly_consumer", PartitionedAssetTimetable(assets=Asset("hourly_out"))), now=clock())
    with DAG("hourly_producer", schedule=CronPartitionTimetable("15 * * * *", timezone="UTC"), start_date=START):
        @task(outlets=[Asset("hourly_out")])
        def produce():
            return None

        producer = produce()
    ti = TIKey("hourly_producer", run.run_id, "produce")
    store.put_outlet_events(ti, 1, outlet_event_specs(producer.operator, OutletEventAccessors(), run), clock())
    assert publish_outlet_events(store, ti, 1) == {"hourly_consumer"}
    [consumed] = create_asset_triggered_runs(store, _dag_for(store), now=clock(), dag_ids=["hourly_consumer"])
    assert (consumed.partition_key, consumed.partition_date) == (run.partition_key, run.partition_date)
    assert publish_outlet_events(store, ti, 1) == set()  # delivered again: no second run
    assert create_asset_triggered_runs(store, _dag_for(store), now=clock(), dag_ids=["hourly_consumer"]) == []

    raw = Asset("sales")
    with DAG("runtime", schedule=PartitionedAtRuntime(), start_date=START):
        @task(outlets=[raw])
        def emit():
            return None

        produced = emit()
    accessors = OutletEventAccessors()
    accessors[raw].add_partitions(["us|x", "eu|x"])
    accessors[raw].add_partitions("us|x")  # duplicates collapse
    specs = outlet_event_specs(produced.operator, accessors)
    assert [s["partition_key"] for s in specs] == ["eu|x", "us|x"]
    with pytest.raises(ValueError, match="empty"):
        accessors[raw].add_partitions(" ")
