"""Slot transfer (issue 19): a worker's mini scheduler gives the ended try's slots to the next try it claims, one
write per limit instead of a take and a release; a sharded limit falls back to take + release, a lost queue race
releases the new holder, and a run waiting on a full pool is claimed by the end that frees its slot, at once.

Workers are played as the worker Lambda plays them (``LambdaWorkers``: ``report_try``)."""

from __future__ import annotations

import collections
import contextlib
import itertools
from collections.abc import Iterator
from unittest import mock

import pytest
from botocore.client import BaseClient
from moto import mock_aws

from airflow.sdk import DAG, task
from tests.functional.scheduling.harness import START, Clock, LambdaWorkers, make_store, scheduler_for, store_dags
from updraft.model.limits import DEFAULT_POOL, PARALLELISM_LIMIT, pool_limit, run_tasks_limit
from updraft.model.records import TIKey
from updraft.model.states import DagRunState
from updraft.scheduling.triggering import trigger_dag
from updraft.store.dynamo import DynamoStore

NOW = START


@pytest.fixture(scope="module")
def store() -> Iterator[DynamoStore]:
    with mock_aws():
        yield make_store("slot-transfer")


@contextlib.contextmanager
def limit_writes() -> Iterator[collections.Counter[str]]:
    """Writes of limit items while the block runs, by limit (root and shard items), the operation ignored."""
    counts: collections.Counter[str] = collections.Counter()
    original = BaseClient._make_api_call

    def call(client, operation, params):
        if operation in ("UpdateItem", "PutItem", "DeleteItem"):
            pk = params.get("Key", params.get("Item", {})).get("pk", {}).get("S", "")
            if pk.startswith("LIMIT#"):
                counts[pk.removeprefix("LIMIT#").split("#")[0]] += 1
        return original(client, operation, params)

    with mock.patch.object(BaseClient, "_make_api_call", call):
        yield counts


def _dag(dag_id: str, *, chain: int = 2, extra: str | None = None, **dag_kwargs) -> DAG:
    """A chain of ``chain`` tasks t0 >> t1 >> ..., and ``extra`` beside it."""
    dag = DAG(dag_id, schedule=None, start_date=START, **dag_kwargs)

    @task(dag=dag)
    def work():
        return None

    with dag:
        tasks = [work.override(task_id=f"t{i}")() for i in range(chain)]
        for upstream, downstream in itertools.pairwise(tasks):
            upstream >> downstream
        if extra is not None:
            work.override(task_id=extra)()
    return dag


def _start(store: DynamoStore, dag: DAG) -> tuple[LambdaWorkers, Clock]:
    """The DAG stored and triggered, and one tick: its run started and its first tasks claimed."""
    clock = Clock()
    store_dags(store, dag, now=clock())
    trigger_dag(store, dag.dag_id, now=clock(), run_id="r")
    scheduler, executor = scheduler_for(store, clock, parallelism=128)
    scheduler.run_pass()
    return LambdaWorkers(store, scheduler, executor, clock), clock


def _holders(store: DynamoStore, limit_id: str) -> set[str]:
    state = store.get_limit(limit_id)
    return set(state.holders) if state else set()


def _tries(dag_id: str, *task_ids: str) -> set[str]:
    return {TIKey(dag_id, "r", task_id).holder(1) for task_id in task_ids}


def _limits(dag_id: str) -> list[str]:
    return [pool_limit(DEFAULT_POOL), run_tasks_limit(dag_id, "r"), PARALLELISM_LIMIT]


def test_a_chain_hop_moves_each_slot_in_one_write(store):
    workers, _ = _start(store, _dag("hop", chain=3))
    (first,) = workers.executor.take()
    with limit_writes() as writes:
        assert workers.run_one(first)
    # Was 6 per limit pair: the next task's take and this try's release.
    assert dict(writes) == {"pool:default_pool": 1, "run_tasks:hop:r": 1, "parallelism": 1}
    assert [d.key.task_id for d in workers.executor.dispatched] == ["t1"]
    for limit_id in _limits("hop"):
        assert _holders(store, limit_id) == _tries("hop", "t1"), limit_id
    assert workers.drain() == 2
    assert store.get_run("hop", "r").state == DagRunState.SUCCESS
    for limit_id in _limits("hop"):
        assert _holders(store, limit_id) == set(), limit_id


def test_a_queue_race_lost_after_a_transfer_releases_the_new_holder(store):
    workers, _ = _start(store, _dag("lost"))
    (first,) = workers.executor.take()
    queue_ti = store.queue_ti
    calls = []

    def lose_once(*args, **kwargs):  # t1's first queueing loses (as to another scheduler), the look after wins
        calls.append(args)
        return len(calls) > 1 and queue_ti(*args, **kwargs)

    with mock.patch.object(store, "queue_ti", side_effect=lose_once), limit_writes() as writes:
        assert workers.run_one(first)
    assert len(calls) == 2
    # Per limit: the transfer, the release of the loser's holder, the take of the look after; the ended try's
    # own release is not sent (its entry went with the transfer).
    assert sorted(writes.values()) == [3, 3, 3]
    for limit_id in _limits("lost"):
        assert _holders(store, limit_id) == _tries("lost", "t1"), limit_id  # held once, by the winner
    assert workers.drain() == 1
    assert store.get_run("lost", "r").state == DagRunState.SUCCESS
    for limit_id in _limits("lost"):
        assert _holders(store, limit_id) == set(), limit_id


def test_a_sharded_limit_falls_back_to_take_and_release(store):
    run_tasks = run_tasks_limit("sharded", "r")
    others = [f"other|{n}" for n in range(6)]  # more holders than a root takes: the limit spreads over shards
    for holder in others:
        assert store.take_slots(run_tasks, holder, 1, limit=40, now=NOW)
    workers, _ = _start(store, _dag("sharded", max_active_tasks=40))
    (first,) = workers.executor.take()
    with limit_writes() as writes:
        assert workers.run_one(first)
    assert writes[pool_limit(DEFAULT_POOL)] == writes[PARALLELISM_LIMIT] == 1  # transferred
    assert writes[run_tasks] >= 2  # the next try's take and this try's release, as before
    assert _holders(store, run_tasks) == set(others) | _tries("sharded", "t1")
    for limit_id in (pool_limit(DEFAULT_POOL), PARALLELISM_LIMIT):
        assert _holders(store, limit_id) == _tries("sharded", "t1"), limit_id
    assert workers.drain() == 1
    assert _holders(store, run_tasks) == set(others)


def test_the_end_that_frees_a_full_limits_slot_claims_its_waiter_in_one_look(store):
    # t0 >> t1, and t2 beside them; one task at a time: the tick claims t0 (the higher priority), t2 waits.
    workers, _ = _start(store, _dag("waiting", max_active_tasks=1, extra="t2"))
    (first,) = workers.executor.take()
    assert first.key.task_id == "t0"
    with mock.patch.object(workers.scheduler, "schedule_run", wraps=workers.scheduler.schedule_run) as looks, \
            limit_writes() as writes:
        assert workers.run_one(first)
    # Before: a look whose claims the full limit refused (t0 still held its slot), the release, a second look.
    assert looks.call_count == 1
    assert writes[run_tasks_limit("waiting", "r")] == 1
    (next_try,) = workers.executor.take()
    assert _holders(store, run_tasks_limit("waiting", "r")) == {next_try.key.holder(1)}
    workers.executor.dispatched.append(next_try)
    assert workers.drain() == 2
    assert store.get_run("waiting", "r").state == DagRunState.SUCCESS
    assert _holders(store, run_tasks_limit("waiting", "r")) == set()
