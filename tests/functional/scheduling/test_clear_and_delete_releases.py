"""A clear's reset, a run's deletion and a DAG's deletion give back what their tries held in the same transaction
as the write that ends the holding (the reset, the instance's deletion): no crash point leaves slots held by an
instance that no longer holds them, on moto's DynamoDB."""

from __future__ import annotations

import pytest

from airflow.sdk import DAG, task
from tests.dynamo_requests import dynamo_requests
from tests.functional.scheduling.harness import START, held_slots, store_dags
from updraft.model.limits import PARALLELISM_LIMIT, pool_limit
from updraft.model.states import DagRunState, TaskInstanceState
from updraft.scheduling.commands.dag_deletion import delete_dag
from updraft.scheduling.commands.manual_changes import apply_resets, delete_run, set_run_state
from updraft.scheduling.commands.triggering import trigger_dag
from updraft.scheduling.decisions.clearing import reset_of
from updraft.scheduling.try_lifecycle import start_try
from updraft.store import keys

S = TaskInstanceState
LIMITS = (pool_limit("default_pool"), PARALLELISM_LIMIT)


class Crash(Exception):
    pass


def _claimed(env, dag_id: str):
    """``dag_id`` (one task) stored, a run triggered and its try claimed: the run and its queued instance."""
    store, clock, scheduler, executor = env
    with DAG(dag_id, schedule=None, start_date=START) as dag:
        task(lambda: None, task_id="only")()
    store_dags(store, dag, now=clock())
    run = trigger_dag(store, dag_id, now=clock())
    scheduler.run_pass()
    [claimed] = executor.take()
    ti = store.get_ti(claimed.key)
    assert ti.ticket and all(held_slots(store, limit) == 1 for limit in LIMITS)
    return store.get_run(dag_id, run.run_id), ti


def _written_alone(sent, ti) -> list[str]:
    """The requests that wrote ``ti``'s item outside a transaction."""
    sk = keys.ti_sk(ti.task_id, ti.map_index)
    return [r.operation for r in sent if r.sk == sk and r.operation in ("UpdateItem", "PutItem", "DeleteItem")]


def test_a_clears_reset_and_the_release_of_its_slots_are_one_transaction(env):
    store, clock, _scheduler, _executor = env
    run, ti = _claimed(env, "clr1")
    assert start_try(store, ti.key, ti.try_id, now=clock())
    ti = store.get_ti(ti.key)
    with dynamo_requests() as sent:
        [cleared] = apply_resets(store, run, [reset_of(ti, None)], now=clock())
    assert cleared.key == ti.key and not _written_alone(sent, ti)
    after = store.get_ti(ti.key)
    assert (after.state, after.try_id, after.ticket) == (None, None, None)
    assert all(held_slots(store, limit) == 0 for limit in LIMITS)
    # A repeat (the request resent after a timeout) changes nothing and gives nothing twice.
    assert apply_resets(store, run, [reset_of(ti, None)], now=clock()) == []
    assert all(held_slots(store, limit) == 0 for limit in LIMITS)


def test_a_run_deleted_gives_back_its_slots_before_its_item_goes(env, monkeypatch):
    """A crash just after the run's item is deleted (the request never retried: the run is gone) leaks nothing."""
    store, clock, _scheduler, _executor = env
    run, ti = _claimed(env, "del1")
    set_run_state(store, run, DagRunState.FAILED, now=clock())  # deletable, its try still queued
    run = store.get_run("del1", run.run_id)
    deleted = store.delete_run

    def crash_after(*args, **kwargs):
        deleted(*args, **kwargs)
        raise Crash

    monkeypatch.setattr(store, "delete_run", crash_after)
    with dynamo_requests() as sent, pytest.raises(Crash):
        delete_run(store, run, store.get_run_tis("del1", run.run_id), deletable=[DagRunState.FAILED])
    assert store.get_run("del1", run.run_id) is None and store.get_ti(ti.key) is None
    assert not _written_alone(sent, ti)  # the instance went in its release's transaction
    assert all(held_slots(store, limit) == 0 for limit in LIMITS)


def test_a_dag_deleted_gives_back_its_slots_with_its_instances_and_a_crash_is_finished_by_a_retry(env, monkeypatch):
    store, _clock, _scheduler, _executor = env
    run, ti = _claimed(env, "del2")
    deleted = store.delete_run_items
    monkeypatch.setattr(store, "delete_run_items", lambda *a, **k: (_ for _ in ()).throw(Crash()))
    with dynamo_requests() as sent, pytest.raises(Crash):
        delete_dag(store, "del2")
    assert not _written_alone(sent, ti) and store.get_ti(ti.key) is None
    assert all(held_slots(store, limit) == 0 for limit in LIMITS)
    assert store.get_dag_meta("del2") is not None  # found still: a retry finishes it
    monkeypatch.setattr(store, "delete_run_items", deleted)
    assert delete_dag(store, "del2")
    assert store.get_dag_meta("del2") is None and store.get_run("del2", run.run_id) is None
    assert all(held_slots(store, limit) == 0 for limit in LIMITS)
