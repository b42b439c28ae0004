"""Concurrent schedulers claim apart: a pass walks the ready instances by bucket from its own starting bucket, and
a race lost in a bucket leaves the rest of it to the scheduler met there; a try that ends up_for_reschedule
lists no limits it gave back."""

from __future__ import annotations

import datetime as dt

import pytest

from airflow.sdk import DAG, task
from tests.functional.scheduling.harness import START, store_dags
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
