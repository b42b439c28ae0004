"""``airflow.sensors.time_delta`` (Airflow 2 path)."""

from updraft.sensors.time_delta import (
    TimeDeltaSensor,
    TimeDeltaSensorAsync,
    WaitSensor,
)

__all__ = ["TimeDeltaSensor", "TimeDeltaSensorAsync", "WaitSensor"]
