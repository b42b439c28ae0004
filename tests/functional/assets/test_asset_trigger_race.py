"""Four schedulers racing over one DAG's queued asset events: every event ends in exactly one asset-triggered run
(or is still queued), never two, and every run's events meet the condition. moto is serialized, as local mode."""

from __future__ import annotations

import datetime as dt
import threading

from moto import mock_aws

from airflow.sdk import DAG, Asset, task
from tests.functional.scheduling.harness import START, Clock, make_store, store_dags
from updraft.executors.recording import RecordingExecutor
from updraft.scheduling.asset_events import record_asset_event
from updraft.scheduling.asset_triggers import create_asset_triggered_runs
from updraft.scheduling.scheduler import Scheduler

SCHEDULERS = 4
EVENTS = 10


def test_four_schedulers_make_one_run_per_batch(serialized_moto):
    with mock_aws():
        store = make_store()
        clock = Clock()
        with DAG("consumer", schedule=Asset("a") & Asset("b"), start_date=START) as dag:
            @task
            def noop():
                return None

            noop()
        store_dags(store, dag, now=clock())
        schedulers = [Scheduler(store, RecordingExecutor(), clock=clock) for _ in range(SCHEDULERS)]
        stop = threading.Event()
        errors: list[BaseException] = []
        emitted: list[str] = []

        def scheduler_loop(scheduler: Scheduler) -> None:
            try:
                while not stop.is_set():
                    create_asset_triggered_runs(store, scheduler.dag, now=clock())
                    stop.wait(0.002)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=scheduler_loop, args=(s,)) for s in schedulers]
        for t in threads:
            t.start()
        try:
            for i in range(EVENTS):
                when = clock() + dt.timedelta(milliseconds=10 * i)
                event, queued = record_asset_event(store, name="ab"[i % 2], uri="ab"[i % 2], source=f"e{i}",
                                                   timestamp=when)
                assert queued == {"consumer"}
                emitted.append(event.ref)
        finally:
            stop.set()
            for t in threads:
                t.join()
        assert not errors, errors
        create_asset_triggered_runs(store, schedulers[0].dag, now=clock())  # settle: whatever is complete runs
        runs = [r for r in store.list_runs("consumer") if r.run_type == "asset_triggered"]
        assert len(runs) >= 2  # events kept coming while the schedulers raced
        seen: list[str] = []
        for run in runs:
            events = store.get_triggering_events("consumer", run.run_id)
            assert {e.name for e in events} == {"a", "b"}, run.run_id  # a & b held for every run
            seen += [e.ref for e in events]
        assert len(seen) == len(set(seen)), "an event triggered two runs"
        queued = {ref for target in store.queued_targets("consumer") for ref in target.events}
        assert not queued & set(seen)
        assert set(seen) | queued == set(emitted)
        cursor, _ = store.read_queue("consumer")
        assert cursor.done and cursor.batch == len(runs)
