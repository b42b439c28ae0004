"""Sensors construct, validate with Airflow 3's messages, and carry their scheduling fields into the serialized DAG."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from airflow.providers.standard.sensors.date_time import DateTimeSensor, DateTimeSensorAsync
from airflow.providers.standard.sensors.python import PythonSensor
from airflow.providers.standard.sensors.time_delta import TimeDeltaSensor, TimeDeltaSensorAsync, WaitSensor
from airflow.sdk import DAG, BaseSensorOperator, PokeReturnValue, task
from airflow.sensors.base import poke_mode_only
from updraft.sdk.exceptions import AirflowException
from updraft.serialization import deserialize_dag, serialize_dag

DAY = timedelta(days=1)


def test_defaults_match_airflow():
    sensor = TimeDeltaSensor(task_id="wait", delta=DAY)
    assert sensor.poke_interval == 60.0
    assert sensor.timeout == 7 * 24 * 3600.0
    assert sensor.mode == "poke"
    assert (sensor.soft_fail, sensor.exponential_backoff, sensor.silent_fail, sensor.never_fail) == (
        False, False, False, False)
    assert sensor.max_wait is None
    assert sensor.deferrable is False
    assert sensor.reschedule is False
    assert sensor.ui_color == "#e6f1f2"
    assert BaseSensorOperator.valid_modes == ["poke", "reschedule"]


def test_intervals_accept_timedelta_or_seconds_and_store_seconds():
    sensor = TimeDeltaSensor(task_id="wait", delta=DAY, poke_interval=timedelta(minutes=2), timeout=300,
                             max_wait=90, mode="reschedule")
    assert sensor.poke_interval == 120.0
    assert sensor.timeout == 300.0
    assert sensor.max_wait == timedelta(seconds=90)
    assert sensor.reschedule is True


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"poke_interval": -1}, "Operator arg `poke_interval` must be timedelta object or a non-negative number"),
    ({"poke_interval": "60"}, "Operator arg `poke_interval` must be timedelta object or a non-negative number"),
    ({"timeout": -5}, "Operator arg `timeout` must be timedelta object or a non-negative number"),
    ({"max_wait": -1}, "Operator arg `max_wait` must be timedelta object or a non-negative number"),
    ({"poke_interval": timedelta(seconds=-1)}, "The poke_interval must be a non-negative number"),
    ({"timeout": timedelta(seconds=-1)}, "The timeout must be a non-negative number"),
    ({"soft_fail": True, "never_fail": True},
     "soft_fail and never_fail are mutually exclusive, you can not provide both."),
    ({"mode": "sleep"}, "The mode must be one of ['poke', 'reschedule'],' .wait'; received 'sleep'."),
])
def test_invalid_arguments_raise_airflows_errors(kwargs, message):
    with pytest.raises(ValueError) as info:
        TimeDeltaSensor(task_id="wait", delta=DAY, **kwargs)
    assert str(info.value) == message


def test_invalid_mode_message_names_the_dag_and_task():
    with DAG("sensing", schedule=None), pytest.raises(ValueError) as info:
        TimeDeltaSensor(task_id="wait", delta=DAY, mode="bad")
    assert str(info.value) == "The mode must be one of ['poke', 'reschedule'],'sensing .wait'; received 'bad'."


def test_unknown_kwargs_are_rejected_like_airflow():
    with pytest.raises(AirflowException, match="Invalid arguments were passed to TimeDeltaSensor"):
        TimeDeltaSensor(task_id="wait", delta=DAY, poke_intervall=5)


def test_default_args_reach_sensor_arguments():
    with DAG("d", schedule=None, default_args={"poke_interval": 30, "mode": "reschedule", "timeout": 600}):
        sensor = TimeDeltaSensor(task_id="wait", delta=DAY)
    assert (sensor.poke_interval, sensor.mode, sensor.timeout) == (30.0, "reschedule", 600.0)


def test_time_delta_sensor_requires_a_timedelta():
    with pytest.raises(TypeError, match=r"`delta` must be a datetime\.timedelta"):
        TimeDeltaSensor(task_id="wait", delta=3600)


def test_time_delta_sensor_async_is_deprecated_and_deferrable():
    with pytest.warns(DeprecationWarning, match="TimeDeltaSensorAsync is deprecated"):
        sensor = TimeDeltaSensorAsync(task_id="wait", delta=DAY)
    assert sensor.deferrable is True
    assert TimeDeltaSensor(task_id="w2", delta=DAY, deferrable=True).deferrable is True


def test_wait_sensor_reads_ints_as_minutes():
    assert WaitSensor(task_id="w", time_to_wait=5).time_to_wait == timedelta(minutes=5)
    assert WaitSensor(task_id="w2", time_to_wait=timedelta(seconds=7)).time_to_wait == timedelta(seconds=7)


def test_date_time_sensor_keeps_target_time_a_template_string():
    assert DateTimeSensor.template_fields == ("target_time",)
    assert DateTimeSensor(task_id="a", target_time=datetime(2024, 1, 2, 3)).target_time == "2024-01-02T03:00:00"
    templated = "{{ data_interval_end.add(hours=1) }}"
    assert DateTimeSensor(task_id="b", target_time=templated).target_time == templated
    with pytest.raises(TypeError) as info:
        DateTimeSensor(task_id="c", target_time=12)
    assert str(info.value) == "Expected str or datetime.datetime type for target_time. Got <class 'int'>"


def test_date_time_sensor_accepts_an_upstream_xcom():
    with DAG("d", schedule=None):
        @task
        def when() -> str:
            return "2024-01-01"

        upstream = when()
        sensor = DateTimeSensor(task_id="wait", target_time=upstream)
    assert sensor.upstream_task_ids == {"when"}


def test_date_time_sensor_async_is_deferrable():
    sensor = DateTimeSensorAsync(task_id="a", target_time="2024-01-01", end_from_trigger=True)
    assert sensor.deferrable is True
    assert sensor.end_from_trigger is True
    assert sensor.start_from_trigger is False


def test_python_sensor():
    sensor = PythonSensor(task_id="p", python_callable=lambda: True, op_args=[1], op_kwargs={"a": 1},
                          templates_dict={"x": "{{ ds }}"})
    assert PythonSensor.template_fields == ("templates_dict", "op_args", "op_kwargs")
    assert (sensor.op_args, sensor.op_kwargs, sensor.templates_dict) == ([1], {"a": 1}, {"x": "{{ ds }}"})
    bare = PythonSensor(task_id="q", python_callable=print)
    assert (bare.op_args, bare.op_kwargs, bare.templates_dict) == ([], {}, None)
    with pytest.raises(AirflowException, match="`python_callable` param must be callable"):
        PythonSensor(task_id="r", python_callable="not callable")


def test_poke_return_value():
    assert bool(PokeReturnValue(True, xcom_value=3)) is True
    assert bool(PokeReturnValue(False)) is False
    assert PokeReturnValue(True, xcom_value=3).xcom_value == 3


def test_poke_mode_only():
    @poke_mode_only
    class OnlyPoke(BaseSensorOperator):
        pass

    assert OnlyPoke(task_id="ok").mode == "poke"
    with pytest.raises(ValueError, match=r"Cannot set mode to 'reschedule'\. Only 'poke' is acceptable"):
        OnlyPoke(task_id="bad", mode="reschedule")
    with pytest.raises(ValueError, match="poke_mode_only decorator should only be applied to subclasses"):
        poke_mode_only(object)


def test_custom_sensor_subclass():
    class FileSensor(BaseSensorOperator):
        template_fields = ("path",)

        def __init__(self, *, path: str, **kwargs):
            super().__init__(**kwargs)
            self.path = path

    sensor = FileSensor(task_id="f", path="/tmp/x", poke_interval=5, exponential_backoff=True)
    assert (sensor.path, sensor.poke_interval, sensor.exponential_backoff) == ("/tmp/x", 5.0, True)


def test_scheduling_fields_survive_serialization():
    with DAG("sensing", schedule=None) as dag:
        TimeDeltaSensor(task_id="delta", delta=DAY, deferrable=True, mode="reschedule", poke_interval=120,
                        timeout=3600, soft_fail=True, exponential_backoff=True, max_wait=600)
        DateTimeSensorAsync(task_id="at", target_time="2024-01-01T00:00:00")
        PythonSensor(task_id="py", python_callable=lambda: True)
    tasks = {t.task_id: t for t in deserialize_dag(serialize_dag(dag, relative_fileloc="f.py",
                                                                 file_hash="x")).tasks}
    delta = tasks["delta"]
    assert delta.is_sensor is True
    assert delta.extra == {
        "poke_interval": 120.0, "timeout": 3600.0, "mode": "reschedule", "soft_fail": True,
        "exponential_backoff": True, "max_wait": timedelta(minutes=10), "silent_fail": False,
        "never_fail": False, "deferrable": True, "delta": DAY, "end_from_trigger": False,
    }
    assert tasks["at"].extra["deferrable"] is True
    assert tasks["at"].template_values == {"target_time": "2024-01-01T00:00:00"}
    assert tasks["py"].extra["deferrable"] is False
