"""Retry decisions and Airflow's next_retry_datetime, value for value."""

from __future__ import annotations

import datetime as dt
import hashlib
import math
from types import SimpleNamespace

import pytest
from helpers import NOW, START, FakeRunStore, make_run, serialized

from airflow.sdk import DAG, task
from updraft.model.records import TaskInstance
from updraft.model.states import TaskInstanceState as S
from updraft.scheduling.decisions.retries import (
    MAX_RETRY_DELAY,
    failure_outcome,
    logical_date_from_run_id,
    next_retry_datetime,
    will_retry,
)

LOGICAL = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


def _task(**kwargs):
    defaults = {"task_id": "t", "retries": 3, "retry_delay": dt.timedelta(seconds=10),
                "retry_exponential_backoff": False, "max_retry_delay": None}
    return SimpleNamespace(**{**defaults, **kwargs})


def _ti(try_number, state=S.RUNNING):
    return TaskInstance(dag_id="d", run_id="scheduled__2024-01-01T00:00:00+00:00", task_id="t", state=state,
                        try_number=try_number)


def airflow_next_retry(delay_s, multiplier, try_number, max_retry_delay=None, logical="2024-01-01 00:00:00+00:00"):
    """Airflow 3's TaskInstance.next_retry_datetime, transcribed, as the reference."""
    min_backoff = math.ceil(delay_s * (multiplier ** (try_number - 1)))
    min_backoff = max(min_backoff, 1)
    ti_hash = int(hashlib.sha1(f"d#t#{logical}#{try_number}".encode()).hexdigest(), 16)
    modded = min_backoff + ti_hash % min_backoff
    delay = dt.timedelta(seconds=min(modded, MAX_RETRY_DELAY))
    if max_retry_delay:
        delay = min(max_retry_delay, delay)
    return NOW + delay


def test_a_try_with_retries_left_is_up_for_retry_after_retry_delay():
    state, fields = failure_outcome(_task(), _ti(1), NOW)
    assert state == S.UP_FOR_RETRY
    assert fields == {"end_date": NOW, "next_retry_at": NOW + dt.timedelta(seconds=10)}


@pytest.mark.parametrize(("try_number", "retries", "expected"), [
    (1, 0, S.FAILED), (1, 1, S.UP_FOR_RETRY), (2, 1, S.FAILED), (3, 3, S.UP_FOR_RETRY), (4, 3, S.FAILED),
    (0, 1, S.UP_FOR_RETRY),  # never claimed: try_number 0
])
def test_retry_while_try_number_is_at_most_retries(try_number, retries, expected):
    assert failure_outcome(_task(retries=retries), _ti(try_number), NOW)[0] == expected


def test_force_fail_never_retries_and_restarting_always_does():
    assert failure_outcome(_task(), _ti(1), NOW, force_fail=True) == (S.FAILED, {"end_date": NOW,
                                                                                 "next_retry_at": None})
    assert failure_outcome(_task(retries=0), _ti(5, S.RESTARTING), NOW)[0] == S.UP_FOR_RETRY


@pytest.mark.parametrize("state", [S.RUNNING, S.RESTARTING])
@pytest.mark.parametrize(("try_number", "retries"), [(1, 0), (1, 1), (2, 1), (5, 3), (0, 1)])
@pytest.mark.parametrize("force_fail", [False, True])
def test_one_retry_decision_for_the_outcome_and_the_worker_callbacks(state, try_number, retries, force_fail):
    """A restarting try with no retries left is retried by the outcome and by the callback choice alike."""
    from updraft.runtime.execute import _failure_callbacks

    called = []
    task = _task(retries=retries, task_id="t", on_retry_callback=lambda ctx: called.append("retry"),
                 on_failure_callback=lambda ctx: called.append("failure"))
    outcome, _ = failure_outcome(task, _ti(try_number, state), NOW, force_fail=force_fail)
    decision = will_retry(task, try_number, state=state, force_fail=force_fail)
    assert decision == (outcome == S.UP_FOR_RETRY)
    if state == S.RESTARTING:
        assert decision is not force_fail  # cleared while running: retried unless forced to fail
    else:  # the worker's try is running: its callback follows the same decision
        _failure_callbacks({"task": task, "context": {}}, RuntimeError("boom"), try_number, force_fail=force_fail)
        assert called == ["retry" if decision else "failure"]


@pytest.mark.parametrize("try_number", [1, 2, 3, 6])
def test_exponential_backoff_matches_airflow(try_number):
    task = _task(retry_exponential_backoff=True)
    got = next_retry_datetime(task, _ti(try_number), NOW, logical_date=LOGICAL)
    assert got == airflow_next_retry(10, 2, try_number)
    low = 10 * 2 ** (try_number - 1)
    assert NOW + dt.timedelta(seconds=low) <= got < NOW + dt.timedelta(seconds=2 * low)


def test_a_float_multiplier_and_max_retry_delay():
    task = _task(retry_exponential_backoff=3.0, max_retry_delay=dt.timedelta(seconds=100))
    assert next_retry_datetime(task, _ti(2), NOW, logical_date=LOGICAL) == airflow_next_retry(
        10, 3.0, 2, dt.timedelta(seconds=100))
    assert next_retry_datetime(task, _ti(5), NOW, logical_date=LOGICAL) == NOW + dt.timedelta(seconds=100)


def test_max_retry_delay_applies_only_with_backoff():
    task = _task(retry_delay=dt.timedelta(hours=2), max_retry_delay=dt.timedelta(minutes=1))
    assert next_retry_datetime(task, _ti(1), NOW, logical_date=LOGICAL) == NOW + dt.timedelta(hours=2)


def test_backoff_is_capped_at_max_retry_delay_and_never_overflows():
    task = _task(retry_exponential_backoff=True, retry_delay=dt.timedelta(hours=1))
    assert next_retry_datetime(task, _ti(60), NOW, logical_date=LOGICAL) == NOW + dt.timedelta(
        seconds=MAX_RETRY_DELAY)
    assert next_retry_datetime(task, _ti(5000), NOW, logical_date=LOGICAL) == NOW + dt.timedelta(
        seconds=MAX_RETRY_DELAY)


def test_a_zero_delay_with_backoff_waits_at_least_one_second():
    task = _task(retry_exponential_backoff=True, retry_delay=dt.timedelta(0))
    got = next_retry_datetime(task, _ti(1), NOW, logical_date=LOGICAL)
    assert got == airflow_next_retry(0, 2, 1) and got - NOW == dt.timedelta(seconds=1)


def test_the_jitter_uses_the_logical_date_read_back_from_the_run_id():
    assert logical_date_from_run_id("scheduled__2024-01-01T00:00:00+00:00") == LOGICAL
    assert logical_date_from_run_id("my own id") is None
    task = _task(retry_exponential_backoff=True, retry_delay=dt.timedelta(seconds=1000))
    _, fields = failure_outcome(task, _ti(1), NOW)
    assert fields["next_retry_at"] == airflow_next_retry(1000, 2, 1)


def test_up_for_retry_is_scheduled_again_only_when_its_time_has_come():
    with DAG("d", schedule=None, start_date=START) as dag:
        @task(retries=1)
        def flaky():
            return None

        flaky()
    dag = serialized(dag)
    store = FakeRunStore(make_run())
    store.add("flaky", S.UP_FOR_RETRY, try_number=1, next_retry_at=NOW + dt.timedelta(seconds=30))
    waiting = store.evaluate(dag)
    assert waiting.changes == [] and waiting.run_state is None  # not a deadlock: it will retry
    [status] = next(iter(waiting.blocked.values()))
    assert status.name == "Not In Retry Period" and "will be retried" in status.reason
    ready = store.evaluate(dag, now=NOW + dt.timedelta(seconds=30))
    assert [(c.expected, c.state) for c in ready.changes] == [(S.UP_FOR_RETRY, S.SCHEDULED)]
    assert store.items[ready.changes[0].key].try_number == 1  # the claim makes it 2


def test_the_global_cap_is_airflows_max_task_retry_delay_from_the_environment():
    import os
    import subprocess
    import sys

    code = ("import datetime as dt\n"
            "from types import SimpleNamespace\n"
            "from updraft.model.records import TaskInstance\n"
            "from updraft.scheduling.decisions.retries import next_retry_datetime\n"
            "task = SimpleNamespace(task_id='t', retries=99, retry_delay=dt.timedelta(hours=1),\n"
            "                       retry_exponential_backoff=True, max_retry_delay=None)\n"
            "ti = TaskInstance(dag_id='d', run_id='r', task_id='t', try_number=9)\n"
            "now = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)\n"
            "print((next_retry_datetime(task, ti, now, logical_date=now) - now).total_seconds())\n")
    env = {**os.environ, "AIRFLOW__CORE__MAX_TASK_RETRY_DELAY": "600"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60,
                            check=True)
    assert result.stdout.split() == ["600.0"]
