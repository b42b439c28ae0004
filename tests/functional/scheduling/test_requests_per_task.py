"""Requests per task (issue 19): a simple chain run whole, its DynamoDB requests counted at the client.

Counts, never times: every DynamoDB request the scheduler's tick and the workers (played as the worker Lambda
plays them, ``LambdaWorkers``) send is counted at botocore's ``_make_api_call``, one per request (a batch is one).
The bounds are the figures reached (bench/README.md, "Capacity model"); a change that adds a request to
a task's life fails here, naming which operation grew.
"""

from __future__ import annotations

import collections
from collections.abc import Iterator
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
from updraft.model.limits import PARALLELISM_LIMIT, pool_limit, run_tasks_limit
from updraft.model.states import DagRunState
from updraft.scheduling import claim_pass
from updraft.scheduling.commands.triggering import trigger_dag
from updraft.store.dynamo import DynamoStore

TASKS = 6
# The workers' part, per task (the worker Lambda's requests): start, end with the release of its ticket (one
# transaction: the instance and a give to each of its 3 limits; the run comes with the dispatch), the mini
# scheduler's one read (the run with its DAG's row and the run's ENDS item in one batch: the next task's only
# upstream is the one that ended, so no instance is read; ``scheduling.downstream``), the next task's claim (one
# transaction: its creation as queued with its ticket and a take of each limit) = 4; the last task ends the run
# instead of claiming, from one read of the run's instances (26 for the 6; 29 with the slots handed on from try
# to try and released by the last, before tickets).
WORKER_REQUESTS = 26
# The whole run, the tick's pass included (due DAGs, active runs, reconciliation, the run's start, the first
# claim: its transaction refused by its 3 limits not created yet, a read and an ``ensure`` transaction each, the
# claim again), spread over the chain's 6 tasks: 26 in the workers, 33 in the tick's pass.
RUN_REQUESTS = 59


@pytest.fixture(scope="module")
def chain_run() -> Iterator[tuple[collections.Counter[str], collections.Counter[str]]]:
    """(requests of the whole run, requests of the workers' part) for one run of a chain of TASKS.

    The pool size cache expires by wall-clock time; on a loaded machine the run outlasts it and re-reads it (a few
    GetItems more): held for the run, so the counts are the protocol's, not the machine's."""
    with mock_aws(), mock.patch.object(claim_pass, "POOL_SIZE_TTL_S", 3600.0):
        store = make_store("requests-per-task")
        clock = Clock()
        dag = DAG("chain", schedule=None, start_date=START)

        @task(dag=dag)
        def work():
            return None

        with dag:
            previous = None
            for i in range(TASKS):
                current = work.override(task_id=f"t{i}")()
                if previous is not None:
                    previous >> current
                previous = current
        store_dags(store, dag, now=clock())
        trigger_dag(store, "chain", now=clock(), run_id="r")
        scheduler, executor = scheduler_for(store, clock, parallelism=128)
        workers = LambdaWorkers(store, scheduler, executor, clock)
        with dynamo_requests() as whole:
            scheduler.run_pass()
            with dynamo_requests() as worker_part:
                assert workers.drain() == TASKS
        assert store.get_run("chain", "r").state == DagRunState.SUCCESS
        yield collections.Counter(operations(whole)), collections.Counter(operations(worker_part))


def test_a_chain_task_costs_the_workers_no_more_requests_than_reached(chain_run):
    _, worker_part = chain_run
    sent = sum(worker_part.values())
    assert sent <= WORKER_REQUESTS, f"{sent / TASKS:.2f} requests per task: {dict(worker_part)}"


def test_a_whole_chain_run_costs_no_more_requests_per_task_than_reached(chain_run):
    whole, _ = chain_run
    sent = sum(whole.values())
    assert sent <= RUN_REQUESTS, f"{sent / TASKS:.2f} requests per task: {dict(whole)}"


def test_a_tick_reads_whether_its_runs_dags_are_paused_in_one_batch():
    with mock_aws():
        store = make_store("requests-per-tick")
        clock = Clock()
        dags = []
        for n in range(4):
            dag = DAG(f"d{n}", schedule=None, start_date=START)

            @task(dag=dag)
            def work():
                return None

            work()
            dags.append(dag)
        store_dags(store, *dags, now=clock())
        for dag in dags:
            trigger_dag(store, dag.dag_id, now=clock(), run_id="r")
        scheduler, executor = scheduler_for(store, clock, parallelism=128)
        with dynamo_requests() as requests:
            scheduler.run_pass()
        assert len(executor.take()) == 4  # every run started and claimed its task
        meta_reads = [request for request in requests if request.operation == "GetItem" and request.sk == "META"]
        assert not meta_reads, f"the DAG rows were read one by one: {meta_reads}"
        assert "BatchGetItem" in operations(requests)


# Wider than a batch of claims could be (25), and each limit sized by the fan-out.
WIDTH = 40


@pytest.fixture(scope="module")
def fan_out_run() -> Iterator[tuple[list, DynamoStore, str]]:
    """The workers' requests of one run of a fan-out 1 -> WIDTH -> 1 at parallelism WIDTH, with the store and the
    run id."""
    with mock_aws(), mock.patch.object(claim_pass, "POOL_SIZE_TTL_S", 3600.0):
        store = make_store("requests-per-fan-out")
        clock = Clock()
        store.set_pool("default_pool", WIDTH)
        dag = DAG("fan", schedule=None, start_date=START, max_active_tasks=WIDTH)

        @task(dag=dag)
        def work():
            return None

        with dag:
            work.override(task_id="first")() >> [work.override(task_id=f"m{i}")() for i in range(WIDTH)] \
                >> work.override(task_id="last")()
        store_dags(store, dag, now=clock())
        trigger_dag(store, "fan", now=clock(), run_id="r")
        scheduler, executor = scheduler_for(store, clock, parallelism=WIDTH)
        workers = LambdaWorkers(store, scheduler, executor, clock)
        scheduler.run_pass()
        with dynamo_requests() as worker_part:
            workers.run_to_end("fan", "r")
        yield worker_part, store, "r"


@pytest.mark.slow
def test_a_fan_out_gives_every_slot_back(fan_out_run):
    _, store, run_id = fan_out_run
    assert store.get_run("fan", run_id).state == DagRunState.SUCCESS
    for limit_id in (PARALLELISM_LIMIT, pool_limit("default_pool"), run_tasks_limit("fan", run_id)):
        assert held_slots(store, limit_id) == 0, limit_id
    assert all(ti.ticket is None for ti in store.get_run_tis("fan", run_id))


def test_a_fan_outs_middles_are_claimed_in_batches(fan_out_run):
    """The first task's end claims the 40 middles in 2 transactions (up to ``claims.BATCH`` instances, each limit
    taken once for all of them), each task's end with its release is one more: 1.07 transactions per task, 2.0
    claimed one by one. Nothing else writes a task limit's item (no marks, no give-backs, no single-item takes;
    the run's own slot of max_active_runs, released as it ends, is not a task's)."""
    worker_part, _, _ = fan_out_run
    assert not [r for r in worker_part if r.pk.startswith("LIMIT#") and not r.pk.startswith("LIMIT#dag_runs:")
                and r.operation != "TransactWriteItems"]
    per_task = operations(worker_part).count("TransactWriteItems") / (WIDTH + 2)
    assert per_task <= 1.1, f"{per_task:.2f} transactions per task"
