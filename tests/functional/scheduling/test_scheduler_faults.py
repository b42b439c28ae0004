"""Crashes between any two writes, duplicate deliveries and late reports: the next scheduler finishes the work."""

from __future__ import annotations

import collections
import contextlib
import datetime as dt

import pytest
from moto import mock_aws

from airflow.sdk import DAG, task
from tests.dynamo_requests import dynamo_requests
from tests.functional.scheduling.harness import (
    START,
    Clock,
    Workers,
    held_slots,
    make_store,
    scheduler_for,
    store_dags,
)
from updraft.limits import room
from updraft.model.limits import pool_limit
from updraft.model.states import DagRunState, TaskInstanceState
from updraft.scheduling.commands.triggering import trigger_dag
from updraft.scheduling.holding import limits_table
from updraft.scheduling.try_lifecycle import TryResult, finish_try, start_try
from updraft.store import keys

WRITES = {"create_run", "set_run_state", "transition_ti", "create_ti", "queue_ti", "end_try", "apply_ti_change",
          "start_ti", "advance_next_dagrun", "heartbeat"}


class SimulatedCrash(BaseException):
    """A Lambda that dies mid-invocation (BaseException: no `except Exception` in our code may swallow it)."""


class CrashingStore:
    """The real store, except that the Nth write raises after nothing was written."""

    def __init__(self, store, crash_at: int) -> None:
        self._store = store
        self._crash_at = crash_at
        self.writes = 0

    def __getattr__(self, name):
        attr = getattr(self._store, name)
        if name not in WRITES:
            return attr

        def write(*args, **kwargs):
            self.writes += 1
            if self.writes == self._crash_at:
                raise SimulatedCrash(f"crash before write #{self.writes} ({name})")
            return attr(*args, **kwargs)

        return write


def _pool_dag():
    # Retries: a try whose worker died mid-way becomes a zombie and is retried, as Airflow does.
    with DAG("crashy", schedule=None, start_date=START, max_active_tasks=2,
             default_args={"retries": 2, "retry_delay": dt.timedelta(seconds=1)}) as dag:

        @task
        def work():
            return None

        a = work.override(task_id="a", pool="p1")()
        b = work.override(task_id="b", pool="p1")()
        c = work.override(task_id="c")()
        a >> [b, c]
    return dag


def _count_writes_of_a_clean_run() -> int:
    with _crashy() as (store, clock, run):
        counting = CrashingStore(store, crash_at=0)
        scheduler, executor = scheduler_for(counting, clock)
        scheduler.run_pass()
        Workers(counting, scheduler, executor, clock).run_to_end("crashy", run.run_id)
        return counting.writes


WRITES_IN_A_RUN = 40


@contextlib.contextmanager
def _crashy():
    """A fresh table with the DAG stored and one run triggered."""
    with mock_aws():
        store = make_store()
        clock = Clock()
        store.set_pool("p1", 1)
        store_dags(store, _pool_dag(), now=clock())
        yield store, clock, trigger_dag(store, "crashy", now=clock())


def test_the_crash_sweep_covers_every_write_of_a_run():
    assert _count_writes_of_a_clean_run() <= WRITES_IN_A_RUN


@pytest.mark.slow
@pytest.mark.parametrize("crash_at", range(1, WRITES_IN_A_RUN + 1))
def test_a_crash_before_any_write_is_recovered_by_the_next_scheduler(crash_at):
    with _crashy() as (store, clock, run):
        crashing = CrashingStore(store, crash_at)
        doomed, doomed_executor = scheduler_for(crashing, clock)
        workers = Workers(crashing, doomed, doomed_executor, clock)
        try:
            doomed.run_pass()
            workers.drain()
            workers.run_to_end("crashy", run.run_id)
        except SimulatedCrash:
            pass

        # A new invocation picks up: what the dead one dispatched is still delivered (at least once).
        healthy, executor = scheduler_for(store, clock)
        executor.dispatched.extend(doomed_executor.take())
        survivors = Workers(store, healthy, executor, clock, started=workers.started)
        finished = survivors.run_to_end("crashy", run.run_id, max_ticks=30, tick=dt.timedelta(minutes=11))

        assert finished.state == DagRunState.SUCCESS
        assert max(survivors.started.values()) == 1  # no try ran twice
        assert held_slots(store, pool_limit("p1")) == 0 and room(limits_table(store), pool_limit("p1")) == 1


def test_the_same_completion_twice_changes_nothing_more():
    with _crashy() as (store, clock, run):
        scheduler, executor = scheduler_for(store, clock)
        scheduler.run_pass()
        [item] = executor.take()
        assert start_try(store, item.key, item.try_id, now=clock())
        assert not start_try(store, item.key, item.try_id, now=clock())  # duplicate dispatch delivery
        dag = scheduler.dag("crashy", run.dag_hash)
        result = TryResult(TaskInstanceState.SUCCESS)
        assert finish_try(store, item.key, item.try_id, result, now=clock(), dag=dag)
        assert not finish_try(store, item.key, item.try_id, result, now=clock(), dag=dag)
        scheduler.schedule_run("crashy", run.run_id)
        scheduler.schedule_run("crashy", run.run_id)  # the same event twice
        dispatched = executor.take()
        assert collections.Counter(d.key.task_id for d in dispatched) == {"b": 1, "c": 1}


def test_a_late_report_from_a_superseded_try_is_fenced_off():
    with _crashy() as (store, clock, run):
        scheduler, executor = scheduler_for(store, clock)
        scheduler.run_pass()
        [first] = executor.take()
        assert start_try(store, first.key, first.try_id, now=clock())
        # The worker goes silent; its lease runs out and the scheduler declares it a zombie.
        clock.advance(minutes=10)
        scheduler.run_pass()
        ti = store.get_ti(first.key)
        assert ti.state == TaskInstanceState.UP_FOR_RETRY
        assert "zombie" in (ti.note or "")
        # The zombie wakes up and reports success: fenced, nothing changes.
        dag = scheduler.dag("crashy", run.dag_hash)
        assert not finish_try(store, first.key, first.try_id, TryResult(TaskInstanceState.SUCCESS), now=clock(),
                              dag=dag)
        assert store.get_ti(first.key).state == TaskInstanceState.UP_FOR_RETRY
        assert held_slots(store, pool_limit("p1")) == 0


def test_a_zombies_failure_and_the_release_of_its_slots_are_one_transaction():
    """A crash after the zombie's failure cannot leave its slots held: the failure carries their release."""
    with _crashy() as (store, clock, _run):
        scheduler, executor = scheduler_for(store, clock)
        scheduler.run_pass()
        [first] = executor.take()
        assert start_try(store, first.key, first.try_id, now=clock())
        assert held_slots(store, pool_limit("p1")) == 1
        clock.advance(minutes=10)  # its lease runs out
        with dynamo_requests() as sent:
            scheduler.run_pass()
        ti = store.get_ti(first.key)
        assert ti.state == TaskInstanceState.UP_FOR_RETRY and ti.ticket is None
        assert held_slots(store, pool_limit("p1")) == 0
        instance = keys.ti_sk(first.key.task_id, first.key.map_index)
        assert not [r for r in sent if r.sk == instance and r.operation in ("UpdateItem", "PutItem")]
