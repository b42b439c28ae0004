"""A worker's chain hop with tickets (issue 33): the ended try's end and its release are one transaction, the next
try's claim another, and nothing else writes a limit; an end that frees a full limit's slot claims its waiter in
the same look; a pool counts the next try's slot by its state.

Workers are played as the worker Lambda plays them (``LambdaWorkers``: ``report_try``)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from types import SimpleNamespace
from unittest import mock

import pytest
from moto import mock_aws

from airflow.sdk import DAG, task
from tests.dynamo_requests import dynamo_requests, operations
from tests.functional.scheduling.harness import (
    START,
    Clock,
    LambdaWorkers,
    held_slots,
    make_store,
    scheduler_for,
    store_dags,
)
from updraft.api.routes.pools import pool_response
from updraft.limits import Ticket
from updraft.model.limits import DEFAULT_POOL, PARALLELISM_LIMIT, pool_limit, run_tasks_limit
from updraft.model.states import DagRunState
from updraft.scheduling.commands.triggering import trigger_dag
from updraft.scheduling.try_lifecycle import start_try
from updraft.store.dynamo import DynamoStore


@pytest.fixture(scope="module")
def store() -> Iterator[DynamoStore]:
    with mock_aws():
        yield make_store("chain-hop")


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


def test_a_chain_hop_writes_its_limits_in_two_transactions(store):
    workers, _ = _start(store, _dag("hop"))
    (first,) = workers.executor.take()
    with dynamo_requests() as sent:
        assert workers.run_one(first)
    (t1,) = workers.executor.take()
    # t0's end with its release, t1's claim: each one transaction; no single write of a limit's item.
    assert operations(sent).count("TransactWriteItems") == 2
    assert not [r for r in sent if r.pk.startswith("LIMIT#") and r.operation != "TransactWriteItems"]
    assert store.get_ti(first.key).ticket is None
    assert set(Ticket.decode(store.get_ti(t1.key).ticket).limit_ids) == {
        pool_limit(DEFAULT_POOL), run_tasks_limit("hop", "r"), PARALLELISM_LIMIT}
    assert held_slots(store, run_tasks_limit("hop", "r")) == 1


def test_the_end_that_frees_a_full_limits_slot_claims_its_waiter_in_one_look(store):
    # t0 >> t1, and t2 beside them; one task at a time: the tick claims t0 (the higher priority), t2 waits.
    workers, _ = _start(store, _dag("waiting", max_active_tasks=1, extra="t2"))
    (first,) = workers.executor.take()
    assert first.key.task_id == "t0"
    with mock.patch.object(workers.scheduler, "schedule_run", wraps=workers.scheduler.schedule_run) as looks:
        assert workers.run_one(first)
    assert looks.call_count <= 1  # t0's slot was back before the look: no refused look, then a second
    (next_try,) = workers.executor.take()
    assert held_slots(store, run_tasks_limit("waiting", "r")) == 1
    workers.executor.dispatched.append(next_try)
    assert workers.drain() == 2
    assert store.get_run("waiting", "r").state == DagRunState.SUCCESS
    assert held_slots(store, run_tasks_limit("waiting", "r")) == 0


def test_a_pool_counts_the_next_try_by_its_state(store):
    workers, clock = _start(store, _dag("counted", chain=3))
    first = next(d for d in workers.executor.take() if d.key.dag_id == "counted")  # (another test's run too)
    assert workers.run_one(first)
    (t1,) = workers.executor.take()

    def slots() -> tuple[int, int]:
        counts = pool_response(SimpleNamespace(store=store), store.get_pool(DEFAULT_POOL))
        return counts["running_slots"], counts["queued_slots"]

    running, queued = slots()  # t1 queued (and the other tests' tries)
    assert start_try(store, t1.key, t1.try_id, now=clock())
    assert slots() == (running + 1, queued - 1)
