"""The scheduler pass's own DynamoDB requests (issues 19, 33): the first pass of a fresh environment, counted at
the client by item. A run's own limit is written only in transactions (its creation, the claims' takes), a
pool's size is one read of its record, and the tick sizes parallelism to the configuration."""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Iterator

import pytest
from moto import mock_aws

from airflow.sdk import DAG, task
from tests.dynamo_requests import Request, dynamo_requests
from tests.functional.scheduling.harness import START, Clock, make_store, scheduler_for, store_dags
from updraft.limits import Table, ensure, size
from updraft.model.limits import PARALLELISM_LIMIT, pool_limit
from updraft.scheduling.commands.triggering import trigger_dag
from updraft.scheduling.scheduler import Scheduler

# The whole first pass (49 before issue 19's cuts to the pass, 33 before tickets, 37 before the run limits', 40
# before the old limit items went): due DAGs and active runs (4 index shards each), queued assets and backfills,
# the DAG rows, the run's start (max_active_runs's counters created as a claim's are: the start's transaction
# refused, a read, an ``ensure``, the transaction again), the run's instances, each pool's size (its record; the
# default_pool's created by that read), 2 claims (the first refused by its limits not created yet: a read and an
# ``ensure`` transaction each, then sent again; the second one transaction), the instances' creation as queued,
# and parallelism's counters sized to the configuration (a read).
PASS_REQUESTS = 31


@pytest.fixture(scope="module")
def first_pass() -> Iterator[Pass]:
    """Every request of the first pass of an environment with one run of two tasks: one in default_pool, one in
    a named pool of 200 slots (its counters spread over shards, created by earlier claims)."""
    with mock_aws():
        store = make_store("pass-requests")
        clock = Clock()
        store.set_pool("wide", 200)
        assert ensure(Table(*store.transaction_target()), pool_limit("wide"), 200)
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
    # (parallelism's counters twice: read by the claim that created them, and by the tick sizing them)
    twice = {("LIMIT#parallelism", "COUNTER")}
    assert all(n == 1 for key, n in reads.items() if key not in twice), reads
    assert all(reads[key] <= 2 for key in twice), reads
    assert {("LIMIT#pool:default_pool", "POOL"), ("LIMIT#pool:wide", "POOL")} <= set(reads)  # sizes from records


def test_the_first_pass_costs_no_more_requests_than_reached(first_pass):
    assert len(first_pass.requests) <= PASS_REQUESTS, collections.Counter(op for op, _, _, _ in first_pass.requests)


def test_the_tick_sizes_parallelism_to_the_configuration():
    """Parallelism's counters follow the configured value on the tick, claims or not: a redeploy with another
    parallelism holds from its first tick (every ``parallelism_check_interval``)."""
    with mock_aws():
        store = make_store("parallelism-sizing")
        clock = Clock()
        table = Table(*store.transaction_target())
        scheduler, _ = scheduler_for(store, clock, parallelism=128)
        scheduler.run_pass()
        assert size(table, PARALLELISM_LIMIT) == 128  # created by the tick, nothing claimed
        redeployed, _ = scheduler_for(store, clock, parallelism=4)
        redeployed.run_pass()
        assert size(table, PARALLELISM_LIMIT) == 4
        redeployed.config.parallelism = 8
        redeployed.run_pass()  # within the interval: left as it is
        assert size(table, PARALLELISM_LIMIT) == 4
        clock.advance(seconds=redeployed.config.parallelism_check_interval.total_seconds())
        redeployed.run_pass()
        assert size(table, PARALLELISM_LIMIT) == 8
