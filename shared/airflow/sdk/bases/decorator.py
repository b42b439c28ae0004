"""``airflow.sdk.bases.decorator``: what provider task decorators (``@task.sql``, ...) are built from."""

from updraft.sdk.decorators.base import (
    DecoratedOperator,
    TaskDecorator,
    get_unique_task_id,
    is_async_callable,
    task_decorator_factory,
)
from updraft.sdk.execution import KeywordParameters, determine_kwargs

__all__ = ["DecoratedOperator", "KeywordParameters", "TaskDecorator", "determine_kwargs", "get_unique_task_id",
           "is_async_callable", "task_decorator_factory"]
