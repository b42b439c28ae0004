"""``airflow.providers.standard.sensors.weekday``."""

from updraft.sensors.weekday import DayOfWeekSensor

__all__ = ["DayOfWeekSensor"]
