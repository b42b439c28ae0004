""""Why is my task not running?": each reason the issue names, from a real pass on moto, through
``why_not_running`` (what ``updraft tasks why`` and the API's dependencies route serve)."""

from __future__ import annotations

import pytest

from airflow.sdk import DAG, task
from tests.functional.scheduling.harness import START, key, store_dags
from updraft.model.states import TaskInstanceState
from updraft.scheduling.commands.triggering import trigger_dag
from updraft.scheduling.commands.why import NotFound, why_not_running
from updraft.scheduling.decisions.blocked import BlockKind

S = TaskInstanceState


def _one(dag_id, n=1, **kwargs):
    dag_kwargs = {k: kwargs.pop(k) for k in ("max_active_tasks",) if k in kwargs}
    with DAG(dag_id, schedule=None, start_date=START, **dag_kwargs) as dag:
        for i in range(n):
            task(lambda: None, task_id=f"t{i}", **kwargs)()
    return dag


def test_a_task_held_by_a_missing_pool(env):
    store, clock, scheduler, _ = env
    store_dags(store, _one("nopool", pool="nowhere"), now=clock())
    run = trigger_dag(store, "nopool", now=clock())
    scheduler.run_pass()
    [reason] = why_not_running(store, "nopool", run.run_id, "t0")
    assert reason.kind == BlockKind.POOL_MISSING
    assert reason.message == "The pool 'nowhere' does not exist"
    assert reason.dep == "Pool Slots Available"


def test_a_task_held_by_a_full_pool(env):
    store, clock, scheduler, executor = env
    store.set_pool("tiny", 1)
    store_dags(store, _one("full", n=2, pool="tiny"), now=clock())
    run = trigger_dag(store, "full", now=clock())
    report = scheduler.run_pass()
    [claimed] = executor.take()
    waiting = ({"t0", "t1"} - {claimed.key.task_id}).pop()
    [reason] = why_not_running(store, "full", run.run_id, waiting)
    assert reason.kind == BlockKind.POOL_FULL
    assert reason.message == "Not scheduling since there are 0 open slots in pool tiny and require 1 pool slots"
    assert report.not_claimed[waiting] == reason  # the pass reports the same structured reason
    assert why_not_running(store, "full", run.run_id, claimed.key.task_id)[0].message == \
        "Task is in the 'queued' state."


def test_a_task_held_by_max_active_tasks(env):
    store, clock, scheduler, executor = env
    store_dags(store, _one("busy", n=3, max_active_tasks=2), now=clock())
    run = trigger_dag(store, "busy", now=clock())
    scheduler.run_pass()
    claimed = {d.key.task_id for d in executor.take()}
    [waiting] = {"t0", "t1", "t2"} - claimed
    [reason] = why_not_running(store, "busy", run.run_id, waiting)
    assert reason.kind == BlockKind.MAX_ACTIVE_TASKS
    assert reason.message == "The maximum number of running tasks (2) for this DAG run has been reached"


def test_a_task_held_by_an_unmet_trigger_rule_is_evaluated_live(env):
    store, clock, scheduler, _ = env
    with DAG("pair", schedule=None, start_date=START) as dag:
        task(lambda: None, task_id="first")() >> task(lambda: None, task_id="second")()
    store_dags(store, dag, now=clock())
    run = trigger_dag(store, "pair", now=clock())
    scheduler.run_pass()
    assert store.get_ti(key("pair", run.run_id, "second")) is None  # no item: nothing stored to read
    [reason] = why_not_running(store, "pair", run.run_id, "second", now=clock())
    assert reason.kind == BlockKind.DEP and reason.dep == "Trigger Rule"
    assert reason.message.startswith("Task's trigger rule 'all_success' requires all upstream tasks to have "
                                      "succeeded, but found 1 non-success(es).")


def test_a_steady_blocked_task_costs_no_write_per_pass(env):
    store, clock, scheduler, _ = env
    store_dags(store, _one("nopool", pool="nowhere"), now=clock())
    trigger_dag(store, "nopool", now=clock())
    scheduler.run_pass()  # creates the instance with its reason in the same write
    writes = []
    original = store.set_blocked_reason
    store.set_blocked_reason = lambda *a, **kw: writes.append(a) or original(*a, **kw)
    scheduler.run_pass()
    scheduler.run_pass()
    assert writes == []


def test_the_stored_reason_follows_what_blocks_and_a_claim_clears_it(env):
    store, clock, scheduler, executor = env
    store_dags(store, _one("later", pool="later"), now=clock())
    run = trigger_dag(store, "later", now=clock())
    scheduler.run_pass()
    assert store.get_ti(key("later", run.run_id, "t0")).blocked_reason.startswith("pool_missing")
    store.set_pool("later", 0)
    scheduler.claims._pool_sizes.clear()  # what POOL_SIZE_TTL_S later would see
    scheduler.run_pass()  # a stored instance whose reason changed: written again
    [reason] = why_not_running(store, "later", run.run_id, "t0")
    assert (reason.kind, reason.message) == (BlockKind.POOL_FULL, "The task needs 1 slots but pool 'later' has 0")
    store.set_pool("later", 1)
    scheduler.claims._pool_sizes.clear()
    scheduler.run_pass()
    [claimed] = executor.take()
    ti = store.get_ti(claimed.key)
    assert ti.state == S.QUEUED and ti.blocked_reason is None


def test_a_mapped_task_is_asked_about_an_instance_it_has(env):
    store, clock, scheduler, _ = env
    with DAG("mapped", schedule=None, start_date=START, max_active_tasks=1) as dag:
        task(lambda x: x, task_id="each").expand(x=[1, 2])
    store_dags(store, dag, now=clock())
    run = trigger_dag(store, "mapped", now=clock())
    scheduler.run_pass()
    waiting = [ti for ti in store.get_run_tis("mapped", run.run_id) if ti.state == S.SCHEDULED]
    [reason] = why_not_running(store, "mapped", run.run_id, "each", waiting[0].map_index)
    assert reason.kind == BlockKind.MAX_ACTIVE_TASKS
    with pytest.raises(NotFound, match=r"each is mapped: choose --map-index from 0\.\.1"):
        why_not_running(store, "mapped", run.run_id, "each")
