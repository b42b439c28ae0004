"""``airflow.providers.standard.sensors.date_time``."""

from updraft.sensors.date_time import DateTimeSensor, DateTimeSensorAsync

__all__ = ["DateTimeSensor", "DateTimeSensorAsync"]
