"""Slots taken ahead for the tries next in a worker's pass's line (``scheduling/slot_reservations.py``, issue 19):
a try the pass does not claim after all gives back what was taken for it, so every limit ends holding exactly the
tries queued."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from moto import mock_aws

from airflow.sdk import DAG, task
from tests.dynamo_requests import dynamo_requests
from tests.functional.scheduling.harness import START, Clock, LambdaWorkers, make_store, scheduler_for, store_dags
from updraft.model.limits import PARALLELISM_LIMIT, pool_limit, run_tasks_limit
from updraft.model.states import TaskInstanceState
from updraft.scheduling.triggering import trigger_dag
from updraft.store.dynamo import DynamoStore

TASKS = 24
POOL = 6  # more than a root's 4 slots: spread over shards, and fewer than the tries ready


def _spread(store: DynamoStore, limit_id: str, size: int, now) -> None:
    """Spread ``limit_id`` over shards (a root's worth and one more taken, then given back), as a busy
    environment has it: this process then knows it sharded and takes it in batches."""
    for n in range(5):
        assert store.take_slots(limit_id, f"warm-{n}", 1, limit=size, now=now)
    for n in range(5):
        assert store.release_slots(limit_id, f"warm-{n}")
    assert store._shape(limit_id).extent > 1


@pytest.fixture(scope="module")
def narrow_pool_pass() -> Iterator[tuple[DynamoStore, list, list]]:
    """The worker's pass after "first" of first >> TASKS tries in a pool of POOL slots, parallelism 64: (store,
    the tries it queued, its requests)."""
    with mock_aws():
        store = make_store("slot-reservations")
        clock = Clock()
        store.set_pool("narrow", POOL)
        _spread(store, pool_limit("narrow"), POOL, clock())
        _spread(store, PARALLELISM_LIMIT, 64, clock())
        dag = DAG("wide", schedule=None, start_date=START, max_active_tasks=64)

        @task(dag=dag)
        def work():
            return None

        with dag:
            work.override(task_id="first")() >> [work.override(task_id=f"t{i:02d}", pool="narrow")()
                                                 for i in range(TASKS)]
        store_dags(store, dag, now=clock())
        trigger_dag(store, "wide", now=clock(), run_id="r")
        scheduler, executor = scheduler_for(store, clock, parallelism=64)
        scheduler.run_pass()  # starts the run, claims "first"
        [first] = executor.take()
        with dynamo_requests() as requests:
            assert LambdaWorkers(store, scheduler, executor, clock).run_one(first)
        queued = [ti for ti in store.get_run_tis("wide", "r") if ti.state == TaskInstanceState.QUEUED]
        yield store, queued, requests


@pytest.mark.slow
def test_a_pass_holds_exactly_the_tries_it_queued(narrow_pool_pass):
    store, queued, _ = narrow_pool_pass
    assert len(queued) == POOL
    for limit_id in (pool_limit("narrow"), PARALLELISM_LIMIT, run_tasks_limit("wide", "r")):
        # (under the entry each holds it by: "first"'s slot of parallelism and of its run's limit handed on)
        assert set(store.get_limit(limit_id).holders) == {ti.entry(limit_id) for ti in queued}, limit_id


def test_a_narrow_pool_is_taken_ahead_first_and_the_other_limits_only_for_what_it_admitted(narrow_pool_pass):
    """The pool alone first (as a claim takes it); parallelism then only for the tries the pool admitted: no
    take of it is given back."""
    _, _, requests = narrow_pool_pass
    parallelism_deletes = [r for r in requests if r.operation == "DeleteItem"
                           and r.pk.startswith(f"LIMIT#{PARALLELISM_LIMIT}#N#")]
    assert parallelism_deletes == [], f"{len(parallelism_deletes)} parallelism takes given back"


def test_the_pass_takes_ahead_in_batches(narrow_pool_pass):
    _, _, requests = narrow_pool_pass
    shard_writes = [r for r in requests if r.operation == "UpdateItem" and r.pk.startswith(f"LIMIT#{PARALLELISM_LIMIT}")
                    and "#N#" not in r.pk]
    assert len(shard_writes) <= POOL // 2, f"{len(shard_writes)} writes of parallelism's shards for {POOL} tries"
