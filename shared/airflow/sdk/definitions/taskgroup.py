"""``airflow.sdk.definitions.taskgroup``."""

from updraft.sdk.taskgroup import TaskGroup

__all__ = ["TaskGroup"]
