"""``airflow.sdk.definitions.decorators.task_group``."""

from updraft.sdk.decorators import task_group

__all__ = ["task_group"]
