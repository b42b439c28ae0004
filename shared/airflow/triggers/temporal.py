"""``airflow.triggers.temporal`` (Airflow 2 path of the standard provider's time triggers)."""

from updraft.triggers.temporal import DateTimeTrigger, TimeDeltaTrigger

__all__ = ["DateTimeTrigger", "TimeDeltaTrigger"]
