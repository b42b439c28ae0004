"""``airflow.providers.standard.sensors.time_delta``."""

from updraft.sensors.time_delta import (
    TimeDeltaSensor,
    TimeDeltaSensorAsync,
    WaitSensor,
)

__all__ = ["TimeDeltaSensor", "TimeDeltaSensorAsync", "WaitSensor"]
