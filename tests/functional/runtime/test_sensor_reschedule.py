"""Reschedule-mode sensors end to end on a fake clock: each poke is a short try that ends ``up_for_reschedule``,
frees its worker and pool slot, and is claimed again (same try_number) once its reschedule date has come."""

from __future__ import annotations

import datetime as dt
import hashlib

import pytest
from moto import mock_aws

from tests.functional.runtime.rt_harness import RuntimeEnv
from tests.functional.scheduling.harness import held_slots
from updraft.model.limits import pool_limit
from updraft.scheduling.commands.why import why_not_running


@pytest.fixture
def env(tmp_path):
    with mock_aws():
        yield RuntimeEnv(tmp_path)


def _pass(env: RuntimeEnv) -> None:
    env.scheduler.run_pass()
    env.drain()


@pytest.mark.slow
def test_a_rescheduled_sensor_frees_its_slot_between_pokes_and_keeps_its_try(env):
    env.store.set_pool("solo", 1, "one worker's worth")
    env.add("resched", """
    from airflow.providers.standard.sensors.python import PythonSensor
    from airflow.sdk.bases.sensor import PokeReturnValue

    def third_poke(task_reschedule_count):
        return PokeReturnValue(is_done=task_reschedule_count >= 2, xcom_value={"pokes": task_reschedule_count + 1})

    with DAG("resched", schedule=None, start_date=START):
        PythonSensor(task_id="wait", python_callable=third_poke, mode="reschedule", poke_interval=60, pool="solo",
                     priority_weight=10, retries=2)
        PythonOperator(task_id="other", python_callable=lambda: "ran", pool="solo")
    """)
    run = env.trigger("resched")
    first_poke = env.clock()
    _pass(env)
    wait = env.ti("resched", run.run_id, "wait")
    # The first poke ended without a worker held: the other task took the only slot and finished meanwhile.
    assert env.states("resched", run.run_id) == {"wait": "up_for_reschedule", "other": "success"}
    assert (wait.try_number, wait.reschedule_count) == (1, 1)
    due = wait.next_retry_at  # poke_interval after the poke (the try's clock runs in real time from the fake one)
    assert 60 <= (due - first_poke).total_seconds() < 61
    assert held_slots(env.store, pool_limit("solo")) == 0 and wait.ticket is None

    env.clock.advance(seconds=30)
    _pass(env)  # not yet: the reschedule date is a dependency, as Airflow's ReadyToRescheduleDep
    assert env.ti("resched", run.run_id, "wait").state.value == "up_for_reschedule"
    reasons = why_not_running(env.store, "resched", run.run_id, "wait", now=env.clock())
    assert [r.dep for r in reasons] == ["Ready To Reschedule"]
    assert f"rescheduled at {due.isoformat()}" in reasons[0].message

    env.clock.now = due
    _pass(env)
    wait = env.ti("resched", run.run_id, "wait")
    assert (wait.state.value, wait.try_number, wait.reschedule_count) == ("up_for_reschedule", 1, 2)
    assert wait.start_date == wait.first_reschedule_date == first_poke  # the try started at its first poke
    env.clock.now = wait.next_retry_at
    _pass(env)
    wait = env.ti("resched", run.run_id, "wait")
    assert (wait.state.value, wait.try_number) == ("success", 1)
    assert (wait.start_date, wait.end_date) == (first_poke, env.clock())
    assert env.xcom("resched", run.run_id, "wait") == {"pokes": 3}
    assert env.store.get_tries(wait.key) == []  # one try: the pokes are not tries of their own
    assert env.store.get_run("resched", run.run_id).state.value == "success"
    assert "UP_FOR_RESCHEDULE" in env.log("resched", run.run_id, "wait")


@pytest.mark.slow
def test_timeout_counts_from_the_first_poke_and_soft_fail_skips(env):
    env.add("timeouts", """
    from airflow.exceptions import AirflowRescheduleException
    from airflow.providers.standard.sensors.python import PythonSensor
    from airflow.sdk import BaseOperator

    class Later(BaseOperator):
        def __init__(self, *, when, **kwargs):
            super().__init__(**kwargs)
            self.when = when

        def execute(self, context):
            raise AirflowRescheduleException(self.when)

    with DAG("timeouts", schedule=None, start_date=START):
        PythonSensor(task_id="hard", python_callable=lambda: False, mode="reschedule", poke_interval=60,
                     timeout=150, retries=3)
        PythonSensor(task_id="soft", python_callable=lambda: False, mode="reschedule", poke_interval=60,
                     timeout=150, soft_fail=True)
        Later(task_id="naive_date", when=datetime.datetime(2030, 1, 1))  # read as UTC
        Later(task_id="no_date", when="tomorrow")
    """)
    run = env.trigger("timeouts")
    for _ in range(3):  # pokes at 0, 61 and 122 s are within the timeout (each due 60 s after the last)
        _pass(env)
        assert env.states("timeouts", run.run_id) == {"hard": "up_for_reschedule", "soft": "up_for_reschedule",
                                                      "naive_date": "up_for_reschedule", "no_date": "failed"}
        env.clock.advance(seconds=61)
    _pass(env)  # 183 s after the first poke
    assert env.states("timeouts", run.run_id) == {"hard": "failed", "soft": "skipped",
                                                  "naive_date": "up_for_reschedule", "no_date": "failed"}
    hard = env.ti("timeouts", run.run_id, "hard")
    assert hard.try_number == 1 and "AirflowSensorTimeout" in hard.note  # no retry, as Airflow
    assert env.ti("timeouts", run.run_id, "naive_date").next_retry_at == dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
    assert "reschedule_date must be a datetime" in env.ti("timeouts", run.run_id, "no_date").note


def _airflow_backoff(dag_id: str, task_id: str, started_at: object, poke_interval: float, timeout: float,
                     elapsed: float, max_wait: float | None) -> float:
    """Airflow 3's BaseSensorOperator._get_next_poke_interval in reschedule mode, transcribed."""
    def jittered(count: int) -> float:
        min_backoff = max(int(poke_interval * (2 ** (count - 2))), 1)
        run_hash = int(hashlib.sha1(f"{dag_id}#{task_id}#{started_at}#{count}".encode(),
                                    usedforsecurity=False).hexdigest(), 16)
        return min(min_backoff + run_hash % min_backoff, dt.timedelta.max.total_seconds() - 1)

    cumulative, count = 0.0, 0
    while cumulative <= elapsed:
        count += 1
        cumulative += jittered(count)
    interval = min(timeout - int(elapsed), jittered(count))
    return min(max_wait, interval) if max_wait else interval


@pytest.mark.slow
def test_exponential_backoff_reschedules_at_airflows_intervals(env):
    import pendulum

    env.add("backoff", """
    from airflow.providers.standard.sensors.python import PythonSensor

    with DAG("backoff", schedule=None, start_date=START):
        PythonSensor(task_id="grow", python_callable=lambda: False, mode="reschedule", poke_interval=10,
                     exponential_backoff=True, max_wait=200, timeout=3600)
    """)
    run = env.trigger("backoff")
    start = env.clock()
    intervals = []
    for _ in range(6):
        _pass(env)
        ti = env.ti("backoff", run.run_id, "grow")
        assert ti.state.value == "up_for_reschedule" and ti.try_number == 1
        expected = _airflow_backoff("backoff", "grow", pendulum.instance(start), 10, 3600,
                                    (env.clock() - start).total_seconds(), 200)
        intervals.append((ti.next_retry_at - env.clock()).total_seconds())
        assert expected <= intervals[-1] < expected + 1  # plus the poke's own (real) duration
        env.clock.now = ti.next_retry_at
    whole = [int(i) for i in intervals]
    assert whole == sorted(whole) and whole[0] < whole[-1] == 200  # growing, then capped by max_wait
