"""The run's final state as DagRun.update_state decides it: leaves, unfinished work, deadlock."""

from __future__ import annotations

import pytest
from helpers import START, FakeRunStore, make_run, serialized

from airflow.sdk import DAG, task
from updraft.model.states import DagRunState
from updraft.model.states import TaskInstanceState as S


def _dag(trigger_rule="all_success", **task_kwargs):
    with DAG("d", schedule=None, start_date=START) as dag:
        @task
        def work():
            return None

        a = work.override(task_id="a")()
        b = work.override(task_id="b", trigger_rule=trigger_rule, **task_kwargs)()
        leaf = work.override(task_id="leaf", trigger_rule="all_done")()
        a >> b >> leaf
    return serialized(dag)


@pytest.mark.parametrize(("states", "expected"), [
    ({"a": S.SUCCESS, "b": S.SUCCESS, "leaf": S.SUCCESS}, DagRunState.SUCCESS),
    ({"a": S.SUCCESS, "b": S.SKIPPED, "leaf": S.SKIPPED}, DagRunState.SUCCESS),
    ({"a": S.FAILED, "b": S.UPSTREAM_FAILED, "leaf": S.SUCCESS}, DagRunState.SUCCESS),  # only leaves count
    ({"a": S.SUCCESS, "b": S.SUCCESS, "leaf": S.FAILED}, DagRunState.FAILED),
    ({"a": S.SUCCESS, "b": S.FAILED, "leaf": S.UPSTREAM_FAILED}, DagRunState.FAILED),
    ({"a": S.SUCCESS, "b": S.SUCCESS, "leaf": S.RUNNING}, None),
    ({"a": S.SUCCESS, "b": S.UP_FOR_RETRY, "leaf": None}, None),
])
def test_final_state_from_leaves(states, expected):
    store = FakeRunStore(make_run())
    for task_id, state in states.items():
        if state is not None:
            store.add(task_id, state)
    evaluation = store.evaluate(_dag())
    assert evaluation.run_state == expected


def test_a_run_finishes_in_the_same_evaluation_that_marks_its_last_instances():
    store = FakeRunStore(make_run())
    store.add("a", S.FAILED)
    evaluation = store.evaluate(_dag())
    assert store.states() == {"a": "failed", "b": "upstream_failed", "leaf": "scheduled"}
    assert evaluation.run_state is None
    store.set("leaf", S.SUCCESS)
    assert store.evaluate(_dag()).run_state == DagRunState.SUCCESS


def test_nothing_can_ever_run_is_a_deadlock():
    # An upstream instance that was removed never counts as a success: b can never run.
    store = FakeRunStore(make_run())
    store.add("a", S.REMOVED)
    evaluation = store.evaluate(_dag())
    assert evaluation.changes == []
    assert evaluation.run_state == DagRunState.FAILED
    assert evaluation.run_note.startswith("all_tasks_deadlocked") and "b" in evaluation.run_note


def test_no_deadlock_is_declared_when_a_task_has_a_concurrency_limit():
    store = FakeRunStore(make_run())
    store.add("a", S.REMOVED)
    assert store.evaluate(_dag(max_active_tis_per_dagrun=1)).run_state is None


def test_blocked_lists_every_waiting_instance_with_its_reasons():
    store = FakeRunStore(make_run())
    evaluation = store.evaluate(_dag())
    assert sorted(k.task_id for k in evaluation.blocked) == ["b", "leaf"]
    assert all(s.name == "Trigger Rule" and not s.passed for v in evaluation.blocked.values() for s in v)
