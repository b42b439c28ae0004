"""Concurrent schedulers claim apart: a pass walks the ready instances by bucket from its own starting bucket, and
a race lost in a bucket leaves the rest of it to the scheduler met there; a try that ends up_for_reschedule
lists no limits it gave back."""

from __future__ import annotations

import datetime as dt

import pytest

from airflow.sdk import DAG, task
from tests.functional.scheduling.harness import START, scheduler_for, store_dags
from updraft.model.limits import pool_limit
from updraft.model.states import TaskInstanceState
from updraft.scheduling.claim_pass import BUCKETS, bucket_of, spread_ties
from updraft.scheduling.triggering import trigger_dag
from updraft.scheduling.try_lifecycle import TryResult, finish_try, start_try

WIDTH = 12


def _wide_run(store, clock, scheduler):
    """A run of WIDTH independent tasks, all scheduled and none claimed (their pool had no slot at the pass)."""
    with DAG("apart", schedule=None, start_date=START, max_active_tasks=WIDTH) as dag:
        for i in range(WIDTH):
            task(lambda: None, task_id=f"t{i:02d}", pool="apart")()
    store.set_pool("apart", 0)
    store_dags(store, dag, now=clock())
    run = trigger_dag(store, "apart", now=clock())
    scheduler.run_pass()
    store.set_pool("apart", WIDTH)
    tis = store.get_run_tis("apart", run.run_id)
    assert {ti.state for ti in tis} == {TaskInstanceState.SCHEDULED} and len(tis) == WIDTH
    return store.get_run("apart", run.run_id), tis


def test_each_start_walks_every_bucket_once_from_its_own(env):
    store, clock, scheduler, _ = env
    run, tis = _wide_run(store, clock, scheduler)
    runs = {(run.dag_id, run.run_id): run}
    for start in (0, 5, BUCKETS - 1):
        ordered = spread_ties(tis, runs, start)
        assert sorted(ti.key.label for ti in ordered) == sorted(ti.key.label for ti in tis)
        buckets = [(bucket_of(ti) - start) % BUCKETS for ti in ordered]
        assert buckets == sorted(buckets)  # from its start onward, wrapping, each bucket once


@pytest.fixture
def sensor_dag():
    with DAG("poke", schedule=None, start_date=START) as dag:
        task(lambda: None, task_id="wait")()
    return dag


def test_a_try_ended_up_for_reschedule_lists_no_limits(env, sensor_dag):
    store, clock, scheduler, executor = env
    store_dags(store, sensor_dag, now=clock())
    run = trigger_dag(store, "poke", now=clock())
    scheduler.run_pass()
    [poke] = executor.take()
    assert store.get_ti(poke.key).held_limits  # the claim lists what it took
    assert start_try(store, poke.key, poke.try_id, now=clock())
    result = TryResult(TaskInstanceState.UP_FOR_RESCHEDULE, reschedule_date=clock() + dt.timedelta(minutes=1))
    assert finish_try(store, poke.key, poke.try_id, result, now=clock(), dag=scheduler.dag("poke", run.dag_hash))
    ended = store.get_ti(poke.key)
    assert ended.state == TaskInstanceState.UP_FOR_RESCHEDULE
    assert ended.held_limits == []
    assert all(poke.key.holder(1) not in store.get_limit(limit).holders
               for limit in ("parallelism", pool_limit("default_pool")))


def _claimed_by_another_while_waiting(store, first, *, completes: bool):
    """Another scheduler is claiming ``first``: it holds the pool for the try (taken as its claim does); on the
    first read of ``first`` while the pass waits, it has queued it (``completes``) or not (it was refused)."""
    holder = first.key.holder(first.try_number + 1)
    assert store.take_slots(pool_limit("apart"), holder, 1, limit=WIDTH, now=START)
    original = store.get_ti

    def get_ti(key):
        if key == first.key and completes and original(key).state == TaskInstanceState.SCHEDULED:
            assert store.queue_ti(key, expected=TaskInstanceState.SCHEDULED,
                                  fields={"try_number": first.try_number + 1, "held_limits": [pool_limit("apart")]})
        return original(key)

    store.get_ti = get_ti


@pytest.fixture
def first_bucket(monkeypatch):
    """Passes start at bucket 0: which instance a pass claims first is known."""
    monkeypatch.setattr("updraft.scheduling.claim_pass.random.randrange", lambda n: 0)


def _first(tis, run):
    return spread_ties(tis, {(run.dag_id, run.run_id): run}, 0)[0]


@pytest.mark.slow
def test_a_try_held_by_a_claimer_that_wins_is_a_race_lost_and_the_pass_goes_on(env, first_bucket):
    # Before: the same try holding the pool read as "pool full", and the pass stopped asking the pool, so one race
    # lost to another scheduler left every other ready try unclaimed until a later pass.
    store, clock, scheduler, _ = env
    run, tis = _wide_run(store, clock, scheduler)
    first = _first(tis, run)
    _claimed_by_another_while_waiting(store, first, completes=True)
    report = scheduler_for(store, clock)[0].run_pass()  # (a new one: the first remembers the pool's 0 slots)
    assert sorted(d.key.label for d in report.dispatched) == sorted(ti.key.label for ti in tis if ti is not first)
    assert first.key.label not in report.not_claimed
    assert store.get_ti(first.key).state == TaskInstanceState.QUEUED  # the other scheduler's claim stands


def test_a_try_held_by_a_claimer_that_was_refused_is_refused_as_by_a_full_pool(env, first_bucket):
    # The other claimer did not queue the try (refused, or slower than the wait): as by a full pool, the pass
    # stops asking it, so no lighter try takes what the other claimer gives back first.
    store, clock, scheduler, _ = env
    run, tis = _wide_run(store, clock, scheduler)
    first = _first(tis, run)
    _claimed_by_another_while_waiting(store, first, completes=False)
    report = scheduler_for(store, clock)[0].run_pass()
    assert report.dispatched == []
    assert pool_limit("apart") in report.full_limits
    assert store.get_ti(first.key).state == TaskInstanceState.SCHEDULED
