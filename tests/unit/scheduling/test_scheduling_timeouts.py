"""dagrun_timeout, execution_timeout backstop, zombies, stuck queues and fail_fast."""

from __future__ import annotations

import datetime as dt

from helpers import NOW, START, FakeRunStore, make_run, serialized

from airflow.sdk import DAG, task
from updraft.model.states import DagRunState
from updraft.model.states import TaskInstanceState as S
from updraft.scheduling.decisions.backstops import EXECUTION_TIMEOUT_GRACE, QUEUED_TIMEOUT

MIN = dt.timedelta(minutes=1)


def _dag(retries=0, **dag_kwargs):
    with DAG("d", schedule=None, start_date=START, **dag_kwargs) as dag:
        @task(retries=retries, execution_timeout=dt.timedelta(minutes=10))
        def a():
            return None

        @task
        def b():
            return None

        @task
        def c():
            return None

        a() >> b()
        c()
    return serialized(dag)


def test_dagrun_timeout_fails_the_run_and_skips_every_unfinished_instance():
    dag = _dag(dagrun_timeout=dt.timedelta(hours=1))
    store = FakeRunStore(make_run(start_date=NOW - dt.timedelta(hours=2)))
    store.add("a", S.RUNNING, try_number=1, try_id="t1", start_date=NOW - MIN)
    store.add("c", S.SUCCESS)
    evaluation = store.evaluate(dag)
    assert store.states() == {"a": "skipped", "b": "skipped", "c": "success"}
    running = next(ch for ch in evaluation.changes if ch.key.task_id == "a")
    assert running.expected_try_id == "t1" and running.fields["lease_expires_at"] is None
    assert evaluation.run_state == DagRunState.FAILED and evaluation.run_note.startswith("timed_out")


def test_no_timeout_before_the_deadline():
    dag = _dag(dagrun_timeout=dt.timedelta(hours=1))
    store = FakeRunStore(make_run(start_date=NOW - dt.timedelta(minutes=59)))
    assert store.evaluate(dag).run_state is None


def test_a_running_try_past_execution_timeout_plus_grace_is_failed_fenced():
    dag = _dag(retries=1)
    store = FakeRunStore(make_run())
    started = NOW - dt.timedelta(minutes=10) - EXECUTION_TIMEOUT_GRACE
    store.add("a", S.RUNNING, try_number=1, try_id="t1", start_date=started,
              lease_expires_at=NOW + MIN)
    on_time = store.evaluate(dag)  # exactly at deadline + grace: not yet
    assert [c.key.task_id for c in on_time.changes] == ["c"]
    evaluation = store.evaluate(dag, now=NOW + dt.timedelta(seconds=1))
    change = evaluation.changes[0]
    assert (change.expected, change.state, change.expected_try_id) == (S.RUNNING, S.UP_FOR_RETRY, "t1")
    assert "execution_timeout" in change.fields["note"] and change.fields["next_retry_at"] is not None


def test_a_zombie_is_failed_or_retried_with_a_note():
    dag = _dag(retries=1)
    store = FakeRunStore(make_run())
    store.add("a", S.RUNNING, try_number=1, try_id="t1", start_date=NOW - MIN, lease_expires_at=NOW - MIN)
    evaluation = store.evaluate(dag)
    zombie = evaluation.changes[0]
    assert (zombie.state, zombie.expected_try_id) == (S.UP_FOR_RETRY, "t1")
    assert zombie.fields["note"].startswith("zombie: worker lease expired")
    assert zombie.fields["lease_expires_at"] is None and zombie.fields["end_date"] == NOW
    assert len(evaluation.changes) == 2  # a's retry waits for its retry_delay in the same evaluation (c runs)

    last_try = FakeRunStore(make_run())
    last_try.add("a", S.RUNNING, try_number=2, try_id="t2", start_date=NOW - MIN, lease_expires_at=NOW - MIN)
    last_try.evaluate(dag)
    assert last_try.states()["a"] == "failed" and last_try.states()["b"] == "upstream_failed"


def test_a_live_lease_is_not_a_zombie():
    store = FakeRunStore(make_run())
    store.add("a", S.RUNNING, try_number=1, try_id="t1", start_date=NOW - MIN, lease_expires_at=NOW + MIN)
    evaluation = store.evaluate(_dag())
    assert all(c.key.task_id != "a" for c in evaluation.changes)


def test_a_try_stuck_in_queued_goes_back_to_scheduled_and_gives_its_try_number_back():
    store = FakeRunStore(make_run())
    store.add("a", S.QUEUED, try_number=1, try_id="t1", queued_at=NOW - QUEUED_TIMEOUT)
    assert all(c.key.task_id != "a" for c in store.evaluate(_dag()).changes)
    evaluation = store.evaluate(_dag(), now=NOW + dt.timedelta(seconds=1))
    change = evaluation.changes[0]
    assert (change.expected, change.state, change.expected_try_id) == (S.QUEUED, S.SCHEDULED, "t1")
    assert change.fields["try_number"] == 0 and change.fields["try_id"] is None
    assert change.fields["lease_expires_at"] is None and "queued for more than 600 s" in change.fields["note"]
    assert change.key in evaluation.scheduled


def test_a_queued_try_orphaned_by_its_executor_goes_back_to_scheduled_at_once():
    store = FakeRunStore(make_run())
    store.add("a", S.QUEUED, try_number=2, try_id="t2", queued_at=NOW - MIN, lease_expires_at=NOW - MIN)
    [change] = [c for c in store.evaluate(_dag()).changes if c.key.task_id == "a"]
    assert (change.expected, change.state, change.expected_try_id) == (S.QUEUED, S.SCHEDULED, "t2")
    assert change.fields["try_number"] == 1 and change.fields["lease_expires_at"] is None
    assert "executor stopped" in change.fields["note"]


def test_fail_fast_stops_everything_else_and_fails_the_run():
    with DAG("d", schedule=None, start_date=START, fail_fast=True) as dag:
        @task
        def work():
            return None

        work.override(task_id="a")() >> work.override(task_id="b")()
        work.override(task_id="c")()
        work.override(task_id="d")()
    store = FakeRunStore(make_run())
    store.add("a", S.FAILED)
    store.add("c", S.RUNNING, try_number=1, try_id="tc")
    store.add("d", S.SUCCESS)
    evaluation = store.evaluate(serialized(dag))
    assert store.states() == {"a": "failed", "b": "skipped", "c": "failed", "d": "success"}
    forced = next(ch for ch in evaluation.changes if ch.key.task_id == "c")
    assert forced.expected_try_id == "tc" and "fail_fast" in forced.fields["note"]
    assert evaluation.run_state == DagRunState.FAILED and evaluation.run_note.startswith("fail_fast")


def test_fail_fast_waits_while_the_failed_task_can_still_retry():
    with DAG("d", schedule=None, start_date=START, fail_fast=True) as dag:
        @task(retries=1)
        def work():
            return None

        work.override(task_id="a")()
        work.override(task_id="b")()
    store = FakeRunStore(make_run())
    store.add("a", S.UP_FOR_RETRY, try_number=1, next_retry_at=NOW + MIN)
    store.add("b", S.RUNNING, try_number=1, try_id="tb")
    evaluation = store.evaluate(serialized(dag))
    assert evaluation.changes == [] and evaluation.run_state is None
