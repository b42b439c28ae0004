"""``airflow.sensors.weekday`` (Airflow 2 path)."""

from updraft.sensors.weekday import DayOfWeekSensor

__all__ = ["DayOfWeekSensor"]
