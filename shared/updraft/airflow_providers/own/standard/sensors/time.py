"""``airflow.providers.standard.sensors.time``."""

from updraft.sensors.time import TimeSensor, TimeSensorAsync

__all__ = ["TimeSensor", "TimeSensorAsync"]
