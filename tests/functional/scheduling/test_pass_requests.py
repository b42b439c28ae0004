"""The scheduler pass's own DynamoDB requests (issues 19, 33): the first pass of a fresh environment, counted at
the client by item. A run's own limit is written only in transactions (its creation, the claims' takes), a
pool's size is one read, and reconciliation reads no limit item the pass read already nor any pool record."""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Iterator

import pytest
from moto import mock_aws

from airflow.sdk import DAG, task
from tests.dynamo_requests import Request, dynamo_requests
from tests.functional.scheduling.harness import START, Clock, make_store, scheduler_for, store_dags
from updraft.model.limits import pool_limit
from updraft.scheduling.commands.triggering import trigger_dag
from updraft.scheduling.reconcile import CLAIM_GRACE
from updraft.scheduling.scheduler import Scheduler

# The whole first pass (49 before issue 19's cuts to the pass, 33 before tickets, 37 before the run limits'):
# due DAGs and active runs (4 index shards each), queued assets and backfills, the DAG rows, the run's start (the
# limit item of runs started before tickets read; max_active_runs's counters created as a claim's are: the
# start's transaction refused, a read, an ``ensure``, the transaction again), the run's instances, each pool's
# size (one batch read), 2 claims (the first refused by its limits not created yet: a read and an ``ensure`` transaction each, then sent
# again; the second one transaction), the instances' creation as queued, and reconciliation (parallelism's
# counters sized to the configuration, the limit items of tries claimed before tickets: parallelism, the pools
# list, the pools', the run's).
PASS_REQUESTS = 40


@pytest.fixture(scope="module")
def first_pass() -> Iterator[Pass]:
    """Every request of the first pass of an environment with one run of two tasks: one in default_pool, one in
    a named pool of 32 slots (spread over shards)."""
    with mock_aws():
        store = make_store("pass-requests")
        clock = Clock()
        store.set_pool("wide", 32)
        for n in range(6):  # more holders than a root takes: the pool spreads over shards
            assert store.take_slots(pool_limit("wide"), f"other-{n}", 1, limit=32, now=clock())
        dag = DAG("d", schedule=None, start_date=START)

        @task(dag=dag)
        def plain():
            return None

        @task(dag=dag, pool="wide")
        def pooled():
            return None

        with dag:
            plain()
            pooled()
        store_dags(store, dag, now=clock())
        trigger_dag(store, "d", now=clock(), run_id="r")
        scheduler, executor = scheduler_for(store, clock, parallelism=128)
        store._limit_shapes.clear()  # a scheduler process of its own: it knows no limit yet
        store._limits_known.clear()
        with dynamo_requests() as requests:
            scheduler.run_pass()
        assert len(executor.take()) == 2
        yield Pass(requests, scheduler, clock)


@dataclasses.dataclass
class Pass:
    requests: list[Request]
    scheduler: Scheduler
    clock: Clock


def test_a_run_started_by_the_pass_writes_its_own_limit_only_in_transactions(first_pass):
    # created by the first claim's ``ensure``, taken by the claims' transactions: no single write of its items
    assert not [op for op, pk, _, _ in first_pass.requests
                if pk == "LIMIT#run_tasks:d:r" and op in ("PutItem", "UpdateItem", "DeleteItem")]
    # max_active_runs too: the run's start takes its slot in its own transaction
    assert not [op for op, pk, _, _ in first_pass.requests
                if pk == "LIMIT#dag_runs:d" and op in ("PutItem", "UpdateItem", "DeleteItem")]


def test_a_pass_reads_each_limit_and_pool_record_at_most_once(first_pass):
    reads = collections.Counter((pk, sk) for op, pk, sk, _ in first_pass.requests
                                if op == "GetItem" and pk.startswith("LIMIT#"))
    # (parallelism's counters twice: read by the claim that created them, and by reconciliation sizing them; the
    # run limit's item of runs started before tickets twice: by the run's start and by reconciliation)
    twice = {("LIMIT#parallelism", "COUNTER"), ("LIMIT#dag_runs:d", "LIMIT")}
    assert all(n == 1 for key, n in reads.items() if key not in twice), reads
    assert all(reads[key] <= 2 for key in twice), reads
    assert not [r for r in first_pass.requests if r[2] == "POOL" and r[0] == "GetItem"]  # sizes from the roots


def test_the_first_pass_costs_no_more_requests_than_reached(first_pass):
    assert len(first_pass.requests) <= PASS_REQUESTS, collections.Counter(op for op, _, _, _ in first_pass.requests)


def test_limits_created_by_the_pass_are_reconciled_once_the_grace_is_over(first_pass):
    first_pass.clock.advance(seconds=CLAIM_GRACE.total_seconds())
    runs = first_pass.scheduler.store.active_runs()
    with dynamo_requests() as requests:
        first_pass.scheduler.reconcile(runs)
    read = {pk for op, pk, _, _ in requests if op == "GetItem"}
    assert {"LIMIT#run_tasks:d:r", "LIMIT#dag_runs:d", "LIMIT#pool:default_pool"} <= read


def test_reconciliation_reads_no_limit_of_a_run_still_queued():
    with mock_aws():
        store = make_store("queued-runs")
        clock = Clock()
        dag = DAG("one_at_a_time", schedule=None, start_date=START, max_active_runs=1)

        @task(dag=dag)
        def work():
            return None

        work()
        store_dags(store, dag, now=clock())
        for n in range(3):
            trigger_dag(store, dag.dag_id, now=clock(), run_id=f"r{n}")
        scheduler, _ = scheduler_for(store, clock, parallelism=128)
        scheduler.run_pass()  # r0 starts; r1 and r2 wait for max_active_runs
        clock.advance(seconds=CLAIM_GRACE.total_seconds())
        with dynamo_requests() as requests:
            scheduler.reconcile(store.active_runs())
    read = {pk for op, pk, _, _ in requests if op == "GetItem"}
    assert "LIMIT#run_tasks:one_at_a_time:r0" in read
    assert not {"LIMIT#run_tasks:one_at_a_time:r1", "LIMIT#run_tasks:one_at_a_time:r2"} & read
