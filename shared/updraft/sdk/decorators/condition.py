"""``@task.run_if`` / ``@task.skip_if``: decide from the context, before the task runs, whether it is skipped.

Airflow 3's semantics: the condition is called with the task's context as a pre-execute hook (after any
``pre_execute`` the task already has), and the task is skipped by ``AirflowSkipException`` before ``execute``.
The condition may return a bool or ``(bool, message)``; the message replaces the default skip message. Put the
decorator above ``@task``: applied to anything else it is Airflow's TypeError.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from updraft.sdk.decorators.base import TaskDecorator
from updraft.sdk.exceptions import AirflowSkipException

ConditionFunc = Callable[[Any], "bool | tuple[bool, str | None]"]
PreExecuteHook = Callable[[Any], None]
_T = TypeVar("_T")

DEFAULT_SKIP_MESSAGE = "Task was skipped due to condition."


def run_if(condition: ConditionFunc, skip_message: str | None = None) -> Callable[[_T], _T]:
    """Run the task only when ``condition(context)`` is true; otherwise it is skipped."""
    return _add_hook("run_if", _wrap_skip(condition, skip_message or DEFAULT_SKIP_MESSAGE, reverse=True))


def skip_if(condition: ConditionFunc, skip_message: str | None = None) -> Callable[[_T], _T]:
    """Skip the task when ``condition(context)`` is true."""
    return _add_hook("skip_if", _wrap_skip(condition, skip_message or DEFAULT_SKIP_MESSAGE, reverse=False))


def _add_hook(name: str, hook: PreExecuteHook) -> Callable[[_T], _T]:
    def decorator(task: _T) -> _T:
        if not isinstance(task, TaskDecorator):
            raise TypeError(f"{name} can only be used with task. decorate with @task before @{name}.")
        task.kwargs["pre_execute"] = _combine_hooks(task.kwargs.get("pre_execute"), hook)
        return task

    return decorator


def _wrap_skip(func: ConditionFunc, message: str, *, reverse: bool) -> PreExecuteHook:
    @wraps(func)
    def pre_execute(context: Any) -> None:
        condition = func(context)
        skip_message = message
        if isinstance(condition, tuple):
            condition, custom_message = condition
            if custom_message:
                skip_message = custom_message
        if reverse:
            condition = not condition
        if condition:
            raise AirflowSkipException(skip_message)

    return pre_execute


def _combine_hooks(*hooks: PreExecuteHook | None) -> PreExecuteHook:
    def pre_execute(context: Any) -> None:
        for hook in hooks:
            if hook is not None:
                hook(context)

    return pre_execute
