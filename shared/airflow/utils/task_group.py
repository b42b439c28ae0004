"""``airflow.utils.task_group`` (Airflow 2 path)."""

from updraft.sdk.taskgroup import TaskGroup

__all__ = ["TaskGroup"]
