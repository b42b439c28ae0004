"""``airflow.sensors.date_time`` (Airflow 2 path)."""

from updraft.sensors.date_time import DateTimeSensor, DateTimeSensorAsync

__all__ = ["DateTimeSensor", "DateTimeSensorAsync"]
