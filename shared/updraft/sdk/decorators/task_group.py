"""``@task_group``: calling the function builds a TaskGroup around the tasks it creates."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from updraft.sdk.exceptions import UnsupportedFeatureError
from updraft.sdk.taskgroup import TaskGroup


def task_group(group_id: Callable | str | None = None, **kwargs: Any) -> Any:
    if callable(group_id):
        return _TaskGroupFactory(group_id, None, {})

    def wrap(function: Callable) -> _TaskGroupFactory:
        return _TaskGroupFactory(function, group_id, kwargs)

    return wrap


class _TaskGroupFactory:
    def __init__(self, function: Callable, group_id: str | None, kwargs: dict[str, Any]) -> None:
        self.function = function
        self.group_id = group_id or function.__name__
        self.kwargs = kwargs
        functools.update_wrapper(self, function)

    def override(self, **kwargs: Any) -> _TaskGroupFactory:
        return _TaskGroupFactory(self.function, kwargs.pop("group_id", self.group_id), {**self.kwargs, **kwargs})

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        options = {**self.kwargs}
        if self.function.__doc__ and not options.get("tooltip"):
            options["tooltip"] = self.function.__doc__  # verbatim, as Airflow does
        options.setdefault("add_suffix_on_collision", True)
        with TaskGroup(self.group_id, **options) as group:
            result = self.function(*args, **kwargs)
        # A returned task or XComArg is forwarded so `group_fn() >> next_task` binds to it, as in Airflow.
        return result if result is not None else group

    def expand(self, **kwargs: Any) -> Any:
        raise UnsupportedFeatureError("mapped task groups (@task_group(...).expand)", "not implemented yet")

    def partial(self, **kwargs: Any) -> Any:
        raise UnsupportedFeatureError("mapped task groups (@task_group(...).partial)", "not implemented yet")
