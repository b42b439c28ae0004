"""The run in the dispatch (issue 19): a try claimed by a pass or a worker's mini scheduler carries its run as the
claimer read it, so its worker does not read it again; a run marked failed between the claim and the start ends
the same with or without the carried copy (the fenced start refuses the try).

Workers are played as the worker Lambda plays them (``LambdaWorkers``: the Lambda executor's payload, then
``report_try``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest
from moto import mock_aws

from airflow.sdk import DAG, task
from tests.dynamo_requests import Request, dynamo_requests
from tests.functional.scheduling.harness import (
    START,
    Clock,
    LambdaWorkers,
    held_slots,
    make_store,
    scheduler_for,
    store_dags,
)
from tests.mocked_clients import mocked_client
from updraft.model.limits import DEFAULT_POOL, PARALLELISM_LIMIT, pool_limit, run_tasks_limit
from updraft.model.records import TIKey
from updraft.model.states import DagRunState, TaskInstanceState
from updraft.scheduling.commands.manual_changes import apply_marks, set_run_state
from updraft.scheduling.commands.triggering import trigger_dag
from updraft.scheduling.decisions.marking import run_mark
from updraft.scheduling.scheduler import Scheduler
from updraft.store import keys
from updraft.store.dynamo import DynamoStore


@pytest.fixture(scope="module")
def store() -> Iterator[DynamoStore]:
    with mock_aws():
        yield make_store("run-in-dispatch")


def run_reads(sent: list[Request]) -> list[str]:
    """The run ids of the run items GetItems among ``sent`` read."""
    return [request.sk.removeprefix(keys.run_sk("")) for request in sent
            if request.operation == "GetItem" and request.sk.startswith(keys.run_sk(""))]


def _start(store: DynamoStore, dag_id: str, tasks: int) -> LambdaWorkers:
    dag = DAG(dag_id, schedule=None, start_date=START)

    @task(dag=dag)
    def work():
        return None

    with dag:
        previous = None
        for i in range(tasks):
            current = work.override(task_id=f"t{i}")()
            if previous is not None:
                previous >> current
            previous = current
    clock = Clock()
    store_dags(store, dag, now=clock())
    trigger_dag(store, dag_id, now=clock(), run_id="r")
    scheduler, executor = scheduler_for(store, clock, parallelism=128)
    scheduler.run_pass()
    return LambdaWorkers(store, scheduler, executor, clock)


def test_no_worker_of_a_chain_reads_its_run(store):
    workers = _start(store, "carried", 3)
    with dynamo_requests() as sent:
        assert workers.drain() == 3
    assert store.get_run("carried", "r").state == DagRunState.SUCCESS
    assert run_reads(sent) == [], "a worker read the run its dispatch carried"


@pytest.mark.parametrize("carried", [True, False])
def test_a_run_marked_failed_between_claim_and_start_behaves_as_before(store, carried):
    dag_id = f"marked_{carried}"
    workers = _start(store, dag_id, 2)
    (dispatch,) = workers.executor.take()
    assert dispatch.run is not None and dispatch.run.state == DagRunState.RUNNING
    if not carried:
        dispatch = dataclasses.replace(dispatch, run=None)
    # The user marks the run failed (as the REST API's PATCH does) before the worker starts the try.
    run = store.get_run(dag_id, "r")
    sdag = store.get_serialized_dag(dag_id, run.dag_hash)
    tis = store.get_run_tis(dag_id, "r")
    now = workers.clock()
    apply_marks(store, run_mark(sdag, tis, DagRunState.FAILED, now=now), before={ti.key: ti for ti in tis})
    set_run_state(store, run, DagRunState.FAILED, now=now)
    assert not workers.run_one(dispatch)  # the fenced start refuses it: nothing runs
    assert store.get_run(dag_id, "r").state == DagRunState.FAILED
    assert store.get_ti(TIKey(dag_id, "r", "t0")).state == TaskInstanceState.SKIPPED
    assert workers.executor.take() == []
    assert store.get_ti(TIKey(dag_id, "r", "t0")).ticket is None
    for limit_id in (pool_limit(DEFAULT_POOL), run_tasks_limit(dag_id, "r"), PARALLELISM_LIMIT):
        assert held_slots(store, limit_id) == 0, limit_id


def test_workers_of_a_wide_run_find_its_instances_from_the_carried_run(store):
    # A fan-out wider than one shard of its run's partition, and workers with a store of their own (another
    # process): the carried run says where the instances are, so no worker reads the run to find them.
    dag = DAG("wide_carried", schedule=None, start_date=START)

    @task(dag=dag)
    def work():
        return None

    with dag:
        work.override(task_id="first")() >> [work.override(task_id=f"m{i:03d}")() for i in range(100)]
    clock = Clock()
    store_dags(store, dag, now=clock())
    trigger_dag(store, "wide_carried", now=clock(), run_id="r")
    scheduler, executor = scheduler_for(store, clock, parallelism=128)
    scheduler.run_pass()
    own = DynamoStore(store.config, s3_client=mocked_client("s3"))
    workers = LambdaWorkers(own, Scheduler(own, executor, scheduler.config, clock=clock), executor, clock)
    with dynamo_requests() as sent:
        assert workers.drain() == 101
    assert store.get_run("wide_carried", "r").state == DagRunState.SUCCESS
    assert store.run_shard_count("wide_carried", "r") == 2
    assert run_reads(sent) == [], "a worker read the run its dispatch carried"
    assert {r.pk for r in sent if r.operation == "UpdateItem" and r.pk.startswith(keys.run_pk("wide_carried", "r"))
            } == {keys.run_shard_pk("wide_carried", "r", i) for i in range(2)}
