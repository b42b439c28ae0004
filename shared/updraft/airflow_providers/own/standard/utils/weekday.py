"""``airflow.providers.standard.utils.weekday``."""

from updraft.sdk.weekday import WeekDay

__all__ = ["WeekDay"]
