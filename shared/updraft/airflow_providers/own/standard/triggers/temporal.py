"""``airflow.providers.standard.triggers.temporal``."""

from updraft.triggers.temporal import DateTimeTrigger, TimeDeltaTrigger

__all__ = ["DateTimeTrigger", "TimeDeltaTrigger"]
