"""A user's clear and mark through the scheduler, the claim protocol and fenced workers, on moto's DynamoDB."""

from __future__ import annotations

from airflow.sdk import DAG, task
from tests.functional.scheduling.harness import START, Workers, held_slots, key, store_dags
from updraft.model.limits import PARALLELISM_LIMIT, dag_runs_limit, pool_limit
from updraft.model.records import TaskInstance
from updraft.model.states import DagRunState, TaskInstanceState
from updraft.scheduling.commands.manual_changes import apply_marks, apply_resets, set_run_state
from updraft.scheduling.commands.triggering import trigger_dag
from updraft.scheduling.decisions.clearing import Selection, resets, to_clear, with_relatives
from updraft.scheduling.decisions.marking import run_mark
from updraft.scheduling.decisions.retries import will_retry
from updraft.scheduling.run_slots import holding
from updraft.scheduling.try_lifecycle import TryResult, finish_try, start_try

S = TaskInstanceState


def _dag(dag_id: str = "clr", retries: int = 0):
    with DAG(dag_id, schedule=None, start_date=START) as dag:
        first = task(lambda: None, task_id="first", retries=retries)()
        second = task(lambda: None, task_id="second")()
        first >> second
    return dag


def _clear(store, run_id, dag_id, task_ids, *, downstream=False, only_failed=False, now):
    run = store.get_run(dag_id, run_id)
    sdag = store.get_serialized_dag(dag_id, run.dag_hash)
    selection = with_relatives(sdag, Selection(frozenset(task_ids)), upstream=False, downstream=downstream)
    chosen = to_clear(store.get_run_tis(dag_id, run_id), selection, only_failed=only_failed)
    return apply_resets(store, run, resets(sdag, chosen), now=now)


def test_a_failed_task_cleared_with_its_downstream_reruns_to_success_with_its_try_number_up(env):
    store, clock, scheduler, executor = env
    store_dags(store, _dag(), now=clock())
    run = trigger_dag(store, "clr", now=clock())
    workers = Workers(store, scheduler, executor, clock, outcome=lambda d: TryResult(
        S.FAILED if (d.key.task_id, d.try_number) == ("first", 1) else S.SUCCESS))
    scheduler.run_pass()
    assert workers.run_to_end("clr", run.run_id).state == DagRunState.FAILED
    assert workers.states("clr", run.run_id) == {"first": "failed", "second": "upstream_failed"}

    cleared = _clear(store, run.run_id, "clr", ["first"], downstream=True, now=clock())
    assert sorted(ti.task_id for ti in cleared) == ["first", "second"]
    after = {ti.task_id: ti for ti in store.get_run_tis("clr", run.run_id)}
    assert after["first"].state is None and after["first"].try_number == 1 and after["first"].max_tries == 1
    assert after["second"].state is None
    assert store.get_run("clr", run.run_id).state == DagRunState.QUEUED
    # The failed try is kept as the instance's history.
    assert [(t.try_number, t.state) for t in store.get_tries(key("clr", run.run_id, "first"))] == [(1, S.FAILED)]

    scheduler.run_pass()
    [rerun] = executor.take()
    assert rerun.key.task_id == "first" and rerun.try_number == 2
    workers.run_one(rerun)
    assert workers.run_to_end("clr", run.run_id).state == DagRunState.SUCCESS
    final = {ti.task_id: ti for ti in store.get_run_tis("clr", run.run_id)}
    assert (final["first"].state, final["first"].try_number) == (S.SUCCESS, 2)
    assert (final["second"].state, final["second"].try_number) == (S.SUCCESS, 1)


def test_clearing_a_running_try_fences_its_worker_and_frees_its_slots_and_the_rerun_gets_its_retries(env):
    store, clock, scheduler, executor = env
    store_dags(store, _dag("busy", retries=1), now=clock())
    run = trigger_dag(store, "busy", now=clock())
    scheduler.run_pass()
    [first] = executor.take()
    assert start_try(store, first.key, first.try_id, now=clock())
    assert store.get_ti(first.key).ticket and held_slots(store, pool_limit("default_pool")) == 1

    [cleared] = _clear(store, run.run_id, "busy", ["first"], now=clock())
    assert cleared.state == S.RUNNING
    assert held_slots(store, pool_limit("default_pool")) == held_slots(store, PARALLELISM_LIMIT) == 0
    assert store.get_ti(first.key).ticket is None
    # The cleared try's worker reports late: refused, it does not overwrite the reset.
    sdag = store.get_serialized_dag("busy", run.dag_hash)
    assert not finish_try(store, first.key, first.try_id, TryResult(S.SUCCESS), now=clock(), dag=sdag)
    assert not store.heartbeat(first.key, try_id=first.try_id, lease_expires_at=clock())
    ti = store.get_ti(first.key)
    assert ti.state is None and ti.max_tries == 1 + 1

    scheduler.schedule_run("busy", run.run_id)
    [again] = executor.take()
    assert again.try_number == 2
    # try 2 of max_tries 2 may still retry (the task's own retries=1 alone would not allow it).
    assert will_retry(sdag.task_dict["first"], 2, max_tries=2) and not will_retry(sdag.task_dict["first"], 2)


def test_marking_a_run_failed_fails_its_running_try_skips_the_rest_and_frees_every_slot(env):
    store, clock, scheduler, executor = env
    store_dags(store, _dag("mark"), now=clock())
    run = trigger_dag(store, "mark", now=clock())
    scheduler.run_pass()
    [first] = executor.take()
    assert start_try(store, first.key, first.try_id, now=clock())
    run = store.get_run("mark", run.run_id)
    assert run.ticket and holding(store, dag_runs_limit("mark")) == 1

    sdag = store.get_serialized_dag("mark", run.dag_hash)
    tis = store.get_run_tis("mark", run.run_id)
    virtual = [t for t in (key("mark", run.run_id, "second"),) if t not in {ti.key for ti in tis}]
    everything = tis + [TaskInstance(*k) for k in virtual]
    applied = apply_marks(store, run_mark(sdag, everything, DagRunState.FAILED, now=clock()),
                          before={ti.key: ti for ti in everything})
    set_run_state(store, run, DagRunState.FAILED, now=clock())
    assert {c.key.task_id: c.state for c in applied} == {"first": S.FAILED, "second": S.SKIPPED}
    assert store.get_run("mark", run.run_id).state == DagRunState.FAILED
    assert holding(store, dag_runs_limit("mark")) == 0 and store.get_run("mark", run.run_id).ticket is None
    for limit in (pool_limit("default_pool"), PARALLELISM_LIMIT):
        assert held_slots(store, limit) == 0, limit
    assert not finish_try(store, first.key, first.try_id, TryResult(S.SUCCESS), now=clock(), dag=sdag)
    assert store.get_ti(first.key).state == S.FAILED


def test_a_retry_records_the_try_it_supersedes(env):
    store, clock, scheduler, executor = env
    store_dags(store, _dag("again", retries=1), now=clock())
    run = trigger_dag(store, "again", now=clock())
    workers = Workers(store, scheduler, executor, clock, outcome=lambda d: TryResult(
        S.FAILED if (d.key.task_id, d.try_number) == ("first", 1) else S.SUCCESS))
    scheduler.run_pass()
    workers.drain()
    first = key("again", run.run_id, "first")
    assert store.get_ti(first).state == S.UP_FOR_RETRY and store.get_tries(first) == []
    clock.advance(minutes=6)
    assert workers.run_to_end("again", run.run_id).state == DagRunState.SUCCESS
    [recorded] = store.get_tries(first)
    assert (recorded.try_number, recorded.state, recorded.end_date is not None) == (1, S.FAILED, True)
    assert store.get_ti(first).try_number == 2
