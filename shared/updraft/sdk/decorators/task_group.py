"""``@task_group``: calling the function builds a TaskGroup around the tasks it creates; ``expand`` /
``expand_kwargs`` (after an optional ``partial``) build a mapped task group instead, whose function receives a
``MappedArgument`` for each mapped parameter (Airflow's ``_TaskGroupFactory``)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from updraft.sdk.mappedoperator import (
    DictOfListsExpandInput,
    ListOfDictsExpandInput,
    ensure_xcomarg_return_value,
    is_mappable,
    prevent_duplicates,
)
from updraft.sdk.taskgroup import MappedTaskGroup, TaskGroup
from updraft.sdk.xcom_arg import MappedArgument, XComArg


def task_group(group_id: Callable | str | None = None, **kwargs: Any) -> Any:
    if callable(group_id):
        return _TaskGroupFactory(group_id, None, {})

    def wrap(function: Callable) -> _TaskGroupFactory:
        return _TaskGroupFactory(function, group_id, kwargs)

    return wrap


class _TaskGroupFactory:
    def __init__(self, function: Callable, group_id: str | None, kwargs: dict[str, Any],
                 partial_kwargs: dict[str, Any] | None = None) -> None:
        self.function = function
        self.group_id = group_id or function.__name__
        self.kwargs = kwargs
        self.partial_kwargs = dict(partial_kwargs or {})  # arguments for the function, shared by every index
        functools.update_wrapper(self, function)

    def override(self, **kwargs: Any) -> _TaskGroupFactory:
        return _TaskGroupFactory(self.function, kwargs.pop("group_id", self.group_id), {**self.kwargs, **kwargs},
                                 self.partial_kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._create(TaskGroup, *args, **kwargs)

    def _create(self, group_class: Callable[..., TaskGroup], *args: Any, **kwargs: Any) -> Any:
        options = {**self.kwargs}
        if self.function.__doc__ and not options.get("tooltip"):
            options["tooltip"] = self.function.__doc__  # verbatim, as Airflow does
        options.setdefault("add_suffix_on_collision", True)
        with group_class(self.group_id, **options) as group:
            result = self.function(*args, **kwargs)
        # A returned task or XComArg is forwarded so `group_fn() >> next_task` binds to it, as in Airflow.
        return result if result is not None else group

    @functools.cached_property
    def _signature(self) -> inspect.Signature:
        return inspect.signature(self.function)

    def _check_arg_names(self, func: str, kwargs: Mapping[str, Any]) -> None:
        """Every argument names a parameter of the function, and expand()'s values can be mapped over."""
        parameters = self._signature.parameters
        if any(p.kind == p.VAR_KEYWORD for p in parameters.values()):
            return
        left = dict(kwargs)
        for name in parameters:
            value = left.pop(name, None)
            if func == "expand" and name in kwargs and not is_mappable(value):
                raise ValueError(f"expand() got an unexpected type {type(value).__name__!r} for keyword argument "
                                 f"{name!r}")
        if len(left) == 1:
            raise TypeError(f"{func}() got an unexpected keyword argument {next(iter(left))!r}")
        if left:
            raise TypeError(f"{func}() got unexpected keyword arguments {', '.join(map(repr, left))}")

    def partial(self, **kwargs: Any) -> _TaskGroupFactory:
        self._check_arg_names("partial", kwargs)
        prevent_duplicates(self.partial_kwargs, kwargs, fail_reason="duplicate partial")
        return _TaskGroupFactory(self.function, self.group_id, self.kwargs, {**kwargs, **self.partial_kwargs})

    def expand(self, **kwargs: Any) -> Any:
        if not kwargs:
            raise TypeError("no arguments to expand against")
        self._check_arg_names("expand", kwargs)
        prevent_duplicates(self.partial_kwargs, kwargs, fail_reason="mapping already partial")
        expand_input = DictOfListsExpandInput(dict(kwargs))
        ensure_xcomarg_return_value(expand_input.value)
        return self._create(functools.partial(MappedTaskGroup, expand_input=expand_input), **self.partial_kwargs,
                            **{k: MappedArgument(expand_input, k) for k in kwargs})

    def expand_kwargs(self, kwargs: Any) -> Any:
        if isinstance(kwargs, Sequence) and not isinstance(kwargs, str):
            for item in kwargs:
                if not isinstance(item, (XComArg, Mapping)):
                    raise TypeError(f"expected XComArg or list[dict], not {type(kwargs).__name__}")
        elif not isinstance(kwargs, XComArg):
            raise TypeError(f"expected XComArg or list[dict], not {type(kwargs).__name__}")
        parameters = self._signature.parameters.values()
        if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters):
            raise TypeError("calling expand_kwargs() on task group function with * or ** is not supported")
        expand_input = ListOfDictsExpandInput(kwargs if isinstance(kwargs, XComArg) else list(kwargs))
        ensure_xcomarg_return_value(expand_input.value)
        # Which keys each dict has is only known at run time: every parameter not given by partial() is mapped.
        mapped = [p.name for p in parameters if p.name not in self.partial_kwargs]
        return self._create(functools.partial(MappedTaskGroup, expand_input=expand_input), **self.partial_kwargs,
                            **{k: MappedArgument(expand_input, k) for k in mapped})
