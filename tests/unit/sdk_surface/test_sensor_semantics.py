"""BaseSensorOperator.execute as Airflow 3's: poke/reschedule, timeout, soft_fail, silent_fail, never_fail,
PokeReturnValue and the exponential backoff interval, without a scheduler (the try's clock is set by hand)."""

from __future__ import annotations

import datetime as dt
import hashlib

import pendulum
import pytest

from updraft.sdk.exceptions import (
    AirflowFailException,
    AirflowRescheduleException,
    AirflowSensorTimeout,
    AirflowSkipException,
)
from updraft.sdk.timezone import try_clock
from updraft.sensors.base import BaseSensorOperator, PokeReturnValue

NOW = pendulum.datetime(2024, 5, 1, 12)  # the try's clock starts here (``try_clock``)


class _Ti:
    """What a sensor asks its task instance: when the try's first poke started (None: this is the first)."""

    def __init__(self, first: dt.datetime | None = None, start: dt.datetime = NOW) -> None:
        self.first = first
        self.start_date = start

    def get_first_reschedule_date(self, context):
        return self.first


class Scripted(BaseSensorOperator):
    """Pokes through ``script``: an exception is raised, anything else returned."""

    def __init__(self, *, script, **kwargs):
        super().__init__(**kwargs)
        self.script = list(script)
        self.pokes = 0

    def poke(self, context):
        self.pokes += 1
        step = self.script.pop(0)
        if isinstance(step, BaseException):
            raise step
        return step


def _run(sensor: BaseSensorOperator, ti: _Ti | None = None):
    with try_clock(lambda: NOW):
        return sensor.execute({"ti": ti or _Ti(), "task_reschedule_count": 0 if ti is None or not ti.first else 1})


def test_poke_mode_pokes_until_done_and_returns_the_xcom_value():
    sensor = Scripted(task_id="s", poke_interval=0, script=[False, PokeReturnValue(False),
                                                            PokeReturnValue(True, {"n": 3})])
    assert _run(sensor) == {"n": 3} and sensor.pokes == 3


def test_silent_fail_logs_an_exception_and_pokes_on_without_it_the_try_fails():
    sensor = Scripted(task_id="s", poke_interval=0, silent_fail=True, script=[ValueError("flaky"), True])
    assert _run(sensor) is None and sensor.pokes == 2
    with pytest.raises(ValueError, match="flaky"):
        _run(Scripted(task_id="t", poke_interval=0, script=[ValueError("flaky"), True]))


def test_never_fail_and_soft_fail_turn_failures_into_skips():
    with pytest.raises(AirflowSkipException, match="never_fail"):
        _run(Scripted(task_id="s", poke_interval=0, never_fail=True, script=[ValueError("boom")]))
    with pytest.raises(AirflowSkipException, match="soft_fail"):
        _run(Scripted(task_id="s", poke_interval=0, soft_fail=True, script=[AirflowFailException("no")]))
    with pytest.raises(AirflowFailException):
        _run(Scripted(task_id="s", poke_interval=0, script=[AirflowFailException("no")]))


def test_poke_mode_times_out_or_skips_with_soft_fail():
    with pytest.raises(AirflowSensorTimeout, match=r"exceeds the specified timeout of 0\.0"):
        _run(Scripted(task_id="s", poke_interval=0, timeout=0, script=[False] * 100))
    with pytest.raises(AirflowSkipException, match="Sensor has timed out"):
        _run(Scripted(task_id="s", poke_interval=0, timeout=0, soft_fail=True, script=[False] * 100))


def test_reschedule_mode_asks_for_the_next_poke_instead_of_sleeping():
    sensor = Scripted(task_id="s", mode="reschedule", poke_interval=90, script=[False])
    with pytest.raises(AirflowRescheduleException) as raised:
        _run(sensor)
    # The try's clock starts at NOW and runs in real time: the poke itself took a moment.
    assert dt.timedelta(seconds=90) <= raised.value.reschedule_date - NOW < dt.timedelta(seconds=91)
    assert sensor.pokes == 1


def test_reschedule_mode_times_out_from_the_first_poke():
    first = NOW - dt.timedelta(seconds=101)
    with pytest.raises(AirflowSensorTimeout):
        _run(Scripted(task_id="s", mode="reschedule", timeout=100, script=[False]), _Ti(first))
    with pytest.raises(AirflowSkipException):
        _run(Scripted(task_id="s", mode="reschedule", timeout=100, soft_fail=True, script=[False]), _Ti(first))
    with pytest.raises(AirflowRescheduleException):  # 99 s in: not yet
        _run(Scripted(task_id="s", mode="reschedule", timeout=100, script=[False]),
             _Ti(NOW - dt.timedelta(seconds=99)))


def _airflow_interval(dag_id, task_id, started_at, poke_count, poke_interval, timeout, elapsed, max_wait):
    """Airflow 3's _get_next_poke_interval in poke mode, transcribed."""
    min_backoff = max(int(poke_interval * (2 ** (poke_count - 2))), 1)
    run_hash = int(hashlib.sha1(f"{dag_id}#{task_id}#{started_at}#{poke_count}".encode(),
                                usedforsecurity=False).hexdigest(), 16)
    interval = min(timeout - int(elapsed), min_backoff + run_hash % min_backoff,
                   dt.timedelta.max.total_seconds() - 1)
    return min(max_wait, interval) if max_wait else interval


def test_exponential_backoff_in_poke_mode_is_airflows_and_deterministic():
    from updraft.sdk.dag import DAG

    with DAG("d", schedule=None):
        sensor = Scripted(task_id="s", poke_interval=5, exponential_backoff=True, max_wait=60, timeout=1000,
                          script=[])
    got = [sensor._get_next_poke_interval(123.0, lambda: 7.0, n) for n in range(1, 9)]
    assert got == [_airflow_interval("d", "s", 123.0, n, 5, 1000, 7.0, 60) for n in range(1, 9)]
    assert got == [sensor._get_next_poke_interval(123.0, lambda: 7.0, n) for n in range(1, 9)]
    assert max(got) == 60 and got[0] < got[4]
    plain = Scripted(task_id="p", poke_interval=5, script=[])
    assert plain._get_next_poke_interval(0.0, lambda: 0.0, 4) == 5
