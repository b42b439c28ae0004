"""A run's slot of its DAG's max_active_runs, through ``updraft.limits``: taken in the transaction of its
``queued -> running`` write, given back in the transaction of its end, on moto's DynamoDB."""

from __future__ import annotations

from airflow.sdk import DAG, task
from tests.dynamo_requests import dynamo_requests
from tests.functional.scheduling.harness import START, Workers, store_dags
from updraft.limits import Acquired, Lost
from updraft.model.limits import dag_runs_limit
from updraft.model.records import DagRun
from updraft.model.states import DagRunState
from updraft.scheduling.commands.manual_changes import delete_run, set_run_state
from updraft.scheduling.commands.triggering import trigger_dag
from updraft.scheduling.run_slots import holding, start_holding
from updraft.store import keys

RUN = DagRunState


def _one_at_a_time(store, clock) -> list[DagRun]:
    with DAG("single", schedule=None, start_date=START, max_active_runs=1) as dag:
        task(lambda: None, task_id="only")()
    store_dags(store, dag, now=clock())
    return [trigger_dag(store, "single", run_id=f"r{n}", now=clock()) for n in (1, 2)]


def _run_written_alone(sent, run_id: str) -> list[str]:
    sk = keys.run_sk(run_id)
    return [r.operation for r in sent if r.sk == sk and r.operation in ("UpdateItem", "PutItem", "DeleteItem")]


def test_a_run_starts_and_ends_with_its_slot_in_the_same_transactions(env):
    store, clock, scheduler, executor = env
    first, second = _one_at_a_time(store, clock)
    with dynamo_requests() as sent:
        scheduler.run_pass()
    assert not _run_written_alone(sent, first.run_id)  # started in the transaction that took its slot
    runs = {run.run_id: store.get_run("single", run.run_id) for run in (first, second)}
    assert runs["r1"].state == RUN.RUNNING and runs["r1"].ticket
    assert runs["r2"].state == RUN.QUEUED and runs["r2"].ticket is None  # max_active_runs=1
    assert holding(store, dag_runs_limit("single")) == 1

    workers = Workers(store, scheduler, executor, clock)
    with dynamo_requests() as sent:
        workers.drain()  # r1's task ends; its mini scheduler ends r1
    assert store.get_run("single", "r1").state == RUN.SUCCESS and store.get_run("single", "r1").ticket is None
    assert not _run_written_alone(sent, "r1")  # ended in the transaction that gave its slot back
    assert workers.run_to_end("single", "r2").state == RUN.SUCCESS
    assert holding(store, dag_runs_limit("single")) == 0


def test_of_two_schedulers_starting_one_run_one_takes_its_slot(env):
    store, clock, _scheduler, _executor = env
    first, _ = _one_at_a_time(store, clock)
    assert isinstance(start_holding(store, first, 1, now=clock()), Acquired)
    assert isinstance(start_holding(store, first, 1, now=clock()), Lost)  # read queued: started meanwhile
    assert holding(store, dag_runs_limit("single")) == 1


def test_a_user_s_state_and_a_deletion_give_the_slot_back(env):
    store, clock, scheduler, _executor = env
    first, second = _one_at_a_time(store, clock)
    scheduler.run_pass()
    set_run_state(store, store.get_run("single", "r1"), RUN.QUEUED, now=clock())  # queued holds none
    assert holding(store, dag_runs_limit("single")) == 0 and store.get_run("single", "r1").ticket is None
    scheduler.run_pass()
    started = store.get_run("single", "r1") if store.get_run("single", "r1").ticket else store.get_run("single", "r2")
    assert started.ticket and holding(store, dag_runs_limit("single")) == 1
    set_run_state(store, started, RUN.FAILED, now=clock())
    assert holding(store, dag_runs_limit("single")) == 0

    scheduler.run_pass()  # the other starts; deleting it gives its slot back
    other = next(store.get_run("single", r.run_id) for r in (first, second) if r.run_id != started.run_id)
    assert other.ticket and holding(store, dag_runs_limit("single")) == 1
    with dynamo_requests() as sent:
        assert delete_run(store, other, store.get_run_tis("single", other.run_id), deletable=[RUN.RUNNING])
    assert not _run_written_alone(sent, other.run_id)  # deleted in the transaction that gave its slot back
    assert store.get_run("single", other.run_id) is None and holding(store, dag_runs_limit("single")) == 0
