"""depends_on_past, wait_for_downstream and ignore_first_depends_on_past, as Airflow's PrevDagrunDep decides."""

from __future__ import annotations

import pytest
from helpers import START, FakeRunStore, make_run, make_ti, serialized

from airflow.sdk import DAG, task
from updraft.model.states import TaskInstanceState as S


def _dag(**kwargs):
    with DAG("d", schedule="@daily", start_date=START, catchup=True) as dag:
        @task(**kwargs)
        def work():
            return None

        @task
        def after():
            return None

        work() >> after()
    return serialized(dag)


def _previous(**states):
    run = make_run(run_id="scheduled__prev")
    return [make_ti(run, task_id, state) for task_id, state in states.items()]


def _evaluate(dag, **kwargs):
    store = FakeRunStore(make_run())
    evaluation = store.evaluate(dag, **kwargs)
    return store.states().get("work"), evaluation


def test_the_first_run_has_nothing_to_depend_on():
    assert _evaluate(_dag(depends_on_past=True))[0] == "scheduled"


@pytest.mark.parametrize(("previous", "expected"), [
    ("success", "scheduled"), ("skipped", "scheduled"), ("failed", None), ("running", None),
    ("upstream_failed", None),
])
def test_depends_on_past_needs_the_previous_instance_successful(previous, expected):
    state, evaluation = _evaluate(_dag(depends_on_past=True), previous_tis=_previous(work=S(previous)),
                                  has_previous_run=True)
    assert state == expected
    if expected is None:
        [status] = [s for v in evaluation.blocked.values() for s in v if s.name == "Previous Dagrun State"]
        assert "not in a successful state" in status.reason
        assert evaluation.run_state is None  # depends_on_past is never a deadlock


def test_a_previous_run_that_never_ran_the_task_blocks_unless_ignore_first():
    assert _evaluate(_dag(depends_on_past=True), previous_tis=[], has_previous_run=True)[0] is None
    assert _evaluate(_dag(depends_on_past=True, ignore_first_depends_on_past=True), previous_tis=[],
                     has_previous_run=True)[0] == "scheduled"


def test_wait_for_downstream_needs_the_previous_downstream_done_too():
    dag = _dag(wait_for_downstream=True)
    assert _evaluate(dag, previous_tis=_previous(work=S.SUCCESS, after=S.RUNNING))[0] is None
    assert _evaluate(dag, previous_tis=_previous(work=S.SUCCESS))[0] is None  # after never ran
    assert _evaluate(dag, previous_tis=_previous(work=S.SUCCESS, after=S.SKIPPED))[0] == "scheduled"


def test_without_depends_on_past_the_previous_run_does_not_matter():
    assert _evaluate(_dag(), previous_tis=_previous(work=S.FAILED))[0] == "scheduled"


def test_catchup_ignores_a_previous_run_before_the_task_started():
    dag = _dag(depends_on_past=True, start_date=START.replace(day=5))
    store = FakeRunStore(make_run(logical_date=START.replace(day=10)))
    store.evaluate(dag, previous_tis=_previous(work=S.FAILED), previous_run=make_run(logical_date=START))
    assert store.states()["work"] == "scheduled"


def test_wait_for_past_depends_before_skipping_holds_the_skip_until_the_past_is_met():
    with DAG("d", schedule="@daily", start_date=START) as dag:
        @task
        def up():
            return None

        @task(depends_on_past=True, wait_for_past_depends_before_skipping=True)
        def work():
            return None

        up() >> work()
    dag = serialized(dag)
    store = FakeRunStore(make_run())
    store.add("up", S.SKIPPED)
    evaluation = store.evaluate(dag, previous_tis=_previous(work=S.FAILED))
    assert "work" not in store.states()
    reasons = [s.reason for v in evaluation.blocked.values() for s in v]
    assert "Task should be skipped but the past depends are not met" in reasons
    store.evaluate(dag, previous_tis=_previous(work=S.SUCCESS))
    assert store.states()["work"] == "skipped"
