"""Events that arrive out of order change nothing they should not.

- the mini scheduler's event for a run arrives before the finished try it announces is written: nothing is
  dispatched early, and the event that follows the write dispatches the downstream exactly once;
- a worker's heartbeat or a second start after its try finished is refused (fenced on try_id and state);
- an event for a run that already finished dispatches nothing and leaves the run as it was.
"""

from __future__ import annotations

from airflow.sdk import DAG, task
from tests.functional.scheduling.harness import START, Workers, store_dags
from updraft.model.states import DagRunState, TaskInstanceState
from updraft.scheduling.commands.triggering import trigger_dag
from updraft.scheduling.try_lifecycle import TryResult, finish_try, start_try

S = TaskInstanceState


def _pair():
    with DAG("pair", schedule=None, start_date=START) as dag:

        @task
        def step():
            return None

        step.override(task_id="a")() >> step.override(task_id="b")()
    return dag


def test_an_event_ahead_of_the_write_it_announces_dispatches_nothing_then_the_next_one_dispatches_once(env):
    store, clock, scheduler, executor = env
    store_dags(store, _pair(), now=clock())
    run = trigger_dag(store, "pair", now=clock())
    scheduler.run_pass()
    [first] = executor.take()
    assert start_try(store, first.key, first.try_id, now=clock())

    early = scheduler.schedule_run("pair", run.run_id)  # delivered before the worker wrote its success
    assert early.dispatched == [] and executor.take() == []

    dag = scheduler.dag("pair", run.dag_hash)
    assert finish_try(store, first.key, first.try_id, TryResult(S.SUCCESS), now=clock(), dag=dag)
    late = scheduler.schedule_run("pair", run.run_id)
    again = scheduler.schedule_run("pair", run.run_id)
    dispatched = late.dispatched + again.dispatched
    assert [d.key.task_id for d in dispatched] == ["b"]


def test_a_heartbeat_or_start_after_the_try_finished_is_refused(env):
    store, clock, scheduler, executor = env
    store_dags(store, _pair(), now=clock())
    run = trigger_dag(store, "pair", now=clock())
    scheduler.run_pass()
    [first] = executor.take()
    assert start_try(store, first.key, first.try_id, now=clock())
    dag = scheduler.dag("pair", run.dag_hash)
    assert finish_try(store, first.key, first.try_id, TryResult(S.SUCCESS), now=clock(), dag=dag)

    assert not store.heartbeat(first.key, try_id=first.try_id, lease_expires_at=clock())
    assert not start_try(store, first.key, first.try_id, now=clock())
    ti = store.get_ti(first.key)
    assert ti.state == S.SUCCESS and ti.lease_expires_at is None


def test_an_event_for_a_finished_run_changes_nothing(env):
    store, clock, scheduler, executor = env
    store_dags(store, _pair(), now=clock())
    run = trigger_dag(store, "pair", now=clock())
    scheduler.run_pass()
    workers = Workers(store, scheduler, executor, clock)
    assert workers.run_to_end("pair", run.run_id).state == DagRunState.SUCCESS
    before = workers.states("pair", run.run_id)

    report = scheduler.schedule_run("pair", run.run_id)  # a stale event delivered after the run finished
    scheduler.run_pass()
    assert report.dispatched == [] and executor.take() == []
    assert store.get_run("pair", run.run_id).state == DagRunState.SUCCESS
    assert workers.states("pair", run.run_id) == before
