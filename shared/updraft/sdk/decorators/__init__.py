"""``@task`` (with ``.branch``, ``.short_circuit``, ``.bash``, ``.sensor``, ``.virtualenv``, ``.external_python``,
their ``.branch_*`` forms, ``.run_if``, ``.skip_if``), ``@dag`` and ``@task_group``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from updraft.sdk.decorators.base import make_task_decorator
from updraft.sdk.decorators.condition import run_if, skip_if
from updraft.sdk.decorators.dag import dag
from updraft.sdk.decorators.task_group import task_group
from updraft.sdk.decorators.taskflow import (
    BashDecoratedOperator,
    BranchExternalPythonDecoratedOperator,
    BranchPythonDecoratedOperator,
    BranchPythonVirtualenvDecoratedOperator,
    ExternalPythonDecoratedOperator,
    PythonDecoratedOperator,
    PythonVirtualenvDecoratedOperator,
    SensorDecoratedOperator,
    ShortCircuitDecoratedOperator,
)
from updraft.sdk.exceptions import UnsupportedFeatureError
from updraft.sdk.setup_teardown import setup, teardown

__all__ = ["dag", "setup", "task", "task_group", "teardown"]

_UNSUPPORTED = {
    "docker": "run the task on Fargate (executor='fargate')",
    "kubernetes": "run the task on Fargate (executor='fargate')",
    "kubernetes_cmd": "run the task on Fargate (executor='fargate')",
    "pyspark": "not available",
}


class TaskDecoratorCollection:
    """``task`` itself and its variants, each returning a TaskFlow decorator."""

    def __call__(self, python_callable: Callable | None = None, multiple_outputs: bool | None = None,
                 **kwargs: Any) -> Any:
        return self.python(python_callable, multiple_outputs, **kwargs)

    @staticmethod
    def python(python_callable: Callable | None = None, multiple_outputs: bool | None = None,
               **kwargs: Any) -> Any:
        return make_task_decorator(PythonDecoratedOperator, python_callable, multiple_outputs, kwargs)

    @staticmethod
    def branch(python_callable: Callable | None = None, multiple_outputs: bool | None = None,
               **kwargs: Any) -> Any:
        return make_task_decorator(BranchPythonDecoratedOperator, python_callable, multiple_outputs, kwargs)

    @staticmethod
    def short_circuit(python_callable: Callable | None = None, multiple_outputs: bool | None = None,
                      **kwargs: Any) -> Any:
        return make_task_decorator(ShortCircuitDecoratedOperator, python_callable, multiple_outputs, kwargs)

    @staticmethod
    def bash(python_callable: Callable | None = None, multiple_outputs: bool | None = None, **kwargs: Any) -> Any:
        return make_task_decorator(BashDecoratedOperator, python_callable, multiple_outputs, kwargs)

    @staticmethod
    def sensor(python_callable: Callable | None = None, **kwargs: Any) -> Any:
        return make_task_decorator(SensorDecoratedOperator(), python_callable, False, kwargs)

    @staticmethod
    def virtualenv(python_callable: Callable | None = None, multiple_outputs: bool | None = None,
                   **kwargs: Any) -> Any:
        return make_task_decorator(PythonVirtualenvDecoratedOperator, python_callable, multiple_outputs, kwargs)

    @staticmethod
    def branch_virtualenv(python_callable: Callable | None = None, multiple_outputs: bool | None = None,
                          **kwargs: Any) -> Any:
        return make_task_decorator(BranchPythonVirtualenvDecoratedOperator, python_callable, multiple_outputs,
                                   kwargs)

    @staticmethod
    def external_python(python: str | None = None, python_callable: Callable | None = None,
                        multiple_outputs: bool | None = None, **kwargs: Any) -> Any:
        """``python`` first, as in Airflow: ``@task.external_python("/venv/bin/python")``."""
        return make_task_decorator(ExternalPythonDecoratedOperator, python_callable, multiple_outputs,
                                   {"python": python, **kwargs})

    @staticmethod
    def branch_external_python(python: str | None = None, python_callable: Callable | None = None,
                               multiple_outputs: bool | None = None, **kwargs: Any) -> Any:
        return make_task_decorator(BranchExternalPythonDecoratedOperator, python_callable, multiple_outputs,
                                   {"python": python, **kwargs})

    run_if = staticmethod(run_if)
    skip_if = staticmethod(skip_if)

    def __getattr__(self, name: str) -> Any:
        """A provider's task decorator (``@task.sql`` of common-sql, ...), as Airflow finds it: among the
        installed providers' declared ``task-decorators``."""
        if name in _UNSUPPORTED:
            raise UnsupportedFeatureError(f"@task.{name}", _UNSUPPORTED[name])
        if not name.startswith("_"):
            # lazy: cold start (provider discovery only for a @task.<name> Updraft lacks)
            from updraft.sdk.providers_manager import ProvidersManager

            decorators = ProvidersManager().taskflow_decorators
            if name in decorators:
                return decorators[name]
        raise AttributeError(f"'task' has no attribute '{name}'")


task = TaskDecoratorCollection()
