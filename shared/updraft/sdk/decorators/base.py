"""TaskFlow: ``@task``-decorated functions become operators whose call returns an XComArg.

The decorated operator checks the call against the function's signature at parse time (as Airflow does), so a
wrong argument is an import error, not a failure at run time.
"""

from __future__ import annotations

import functools
import inspect
import re
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from updraft.sdk._internal.class_facts import known_per_class
from updraft.sdk._internal.contexts import DagContext, TaskGroupContext
from updraft.sdk.baseoperator import BaseOperator, merged_default_args
from updraft.sdk.context import KNOWN_CONTEXT_KEYS
from updraft.sdk.exceptions import AirflowException
from updraft.sdk.mappedoperator import (
    DictOfListsExpandInput,
    ListOfDictsExpandInput,
    MappedOperator,
    ensure_xcomarg_return_value,
    is_mappable,
    prevent_duplicates,
)
from updraft.sdk.trigger_rule import TriggerRule
from updraft.sdk.xcom_arg import PlainXComArg, XComArg


def get_unique_task_id(task_id: str, dag: Any, task_group: Any) -> str:
    """``name``, then ``name__1``, ``name__2``... when a decorated function is called more than once."""
    dag = dag or DagContext.current()
    if dag is None:
        return task_id
    group = task_group or TaskGroupContext.current(dag)

    def full(tid: str) -> str:
        return group.child_id(tid) if group is not None else tid

    if full(task_id) not in dag.task_dict:
        return task_id
    core = re.split(r"__\d+$", task_id)[0]
    pattern = re.compile(re.escape(full(core)) + r"__(\d+)$")
    used = [int(m.group(1)) for tid in dag.task_dict for m in [pattern.match(tid)] if m]
    return f"{core}__{max(used, default=0) + 1}"


@functools.lru_cache(maxsize=1024)
def _signature(function: Callable) -> inspect.Signature:
    """A decorated function is inspected once per call site otherwise (ten tasks, ten inspections)."""
    return inspect.signature(function)


def infer_multiple_outputs(function: Callable) -> bool:
    """A function annotated to return a mapping pushes each key as its own XCom (Airflow's inference)."""
    try:
        return_type = typing.get_type_hints(function).get("return")
    except Exception:  # unresolvable string annotations: fall back to the raw annotation
        return_type = _signature(function).return_annotation
    if return_type in (None, inspect.Signature.empty):
        return False
    origin = typing.get_origin(return_type) or return_type
    return isinstance(origin, type) and issubclass(origin, Mapping)


@functools.lru_cache(maxsize=1024)
def bindable_signature(function: Callable) -> inspect.Signature:
    """The function's signature with context-key parameters defaulted, since the runtime supplies them."""
    signature = _signature(function)
    faulty = [p.name for p in signature.parameters.values()
              if p.name in KNOWN_CONTEXT_KEYS and p.default not in (None, inspect.Parameter.empty)]
    if faulty:
        raise ValueError(f"Context key parameter {faulty[0]} can't have a default other than None")
    params = [p.replace(default=None) if p.name in KNOWN_CONTEXT_KEYS and p.kind not in
              (p.VAR_POSITIONAL, p.VAR_KEYWORD) else p for p in signature.parameters.values()]
    try:
        return signature.replace(parameters=params)
    except ValueError as err:
        raise ValueError(
            f"The function signature broke while assigning defaults to context key parameters.\n\n"
            f"The decorator is replacing the signature\n> {function.__name__}{signature}\n\n"
            f"Context key parameters must come after the function's own parameters. ({err})"
        ) from None


@functools.lru_cache(maxsize=1024)
def _binds_without_arguments(function: Callable) -> None:
    """``bindable_signature(function).bind()``, remembered once it passed (a fan-out calls one function, without
    arguments, for each of its tasks); a refusal raises each time, as it is not remembered."""
    bindable_signature(function).bind()


class DecoratedOperator(BaseOperator):
    """Mixin-style base: stores the callable and its call arguments, validated against its signature."""

    custom_operator_name: ClassVar[str] = "@task"
    template_fields: ClassVar[tuple[str, ...]] = ("op_args", "op_kwargs")
    # Python-based operators take the callable and its arguments themselves; others (bash, a provider's SQL
    # operator) do not. None: forwarded when the operator this one decorates has a ``python_callable`` argument.
    forwards_callable: ClassVar[bool | None] = None

    def __init__(
        self,
        *,
        python_callable: Callable,
        task_id: str,
        op_args: Any = None,
        op_kwargs: Mapping[str, Any] | None = None,
        kwargs_to_upstream: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if not kwargs.pop("_updraft_mapped_prototype", False):
            task_id = get_unique_task_id(task_id, kwargs.get("dag"), kwargs.get("task_group"))
            if op_args or op_kwargs:
                bindable_signature(python_callable).bind(*(op_args or ()), **(op_kwargs or {}))
            else:
                _binds_without_arguments(python_callable)
        call: dict[str, Any] = {"python_callable": python_callable, "op_args": list(op_args or ()),
                                "op_kwargs": dict(op_kwargs or {})}
        forwards = self.forwards_callable
        if forwards is None:
            forwards = _decorates_a_python_operator(type(self))
        if forwards:
            super().__init__(task_id=task_id, **call, **(kwargs_to_upstream or {}), **kwargs)
        else:
            super().__init__(task_id=task_id, **(kwargs_to_upstream or {}), **kwargs)
            for name, value in call.items():
                setattr(self, name, value)


    def _hook_apply_defaults(self, kwargs: dict[str, Any], default_args: Mapping[str, Any]) -> dict[str, Any]:
        """``default_args`` also feed the function's own parameters by name (Airflow's hook of the same name)."""
        function = kwargs.get("python_callable")
        if function is None or not default_args:
            return kwargs
        op_kwargs = dict(kwargs.get("op_kwargs") or {})
        for name in _signature(function).parameters:
            if name not in op_kwargs and name in default_args:
                op_kwargs[name] = default_args[name]
        kwargs["op_kwargs"] = op_kwargs
        return kwargs


def _decorates_a_python_operator(cls: type) -> bool:
    """Whether an operator class after ``DecoratedOperator`` in ``cls``'s MRO takes ``python_callable``; known
    per class once (``class_facts``)."""
    return known_per_class(cls, "_updraft_forwards_callable", _find_python_callable_after_decorated)


def _find_python_callable_after_decorated(cls: type) -> bool:
    after = cls.__mro__[cls.__mro__.index(DecoratedOperator) + 1:]
    return any("python_callable" in inspect.signature(c.__dict__["__init__"]).parameters
               for c in after if "__init__" in c.__dict__)


class TaskDecorator:
    """What ``@task`` returns: call it to add a task, or ``override``/``partial``/``expand`` it first."""

    _airflow_is_task_decorator = True
    # Set by @setup / @teardown; every task the decorator creates carries them (Airflow's _TaskDecorator).
    is_setup: bool = False
    is_teardown: bool = False
    on_failure_fail_dagrun: bool = False

    def __init__(self, function: Callable, operator_class: type[BaseOperator], *,
                 multiple_outputs: bool | None = None, kwargs: dict[str, Any] | None = None) -> None:
        if not callable(function):
            raise TypeError(f"@task needs a callable, got {type(function).__name__}")
        if "self" in _signature(function).parameters:
            raise TypeError("@task does not support methods")
        self.function = function
        self.operator_class = operator_class
        self.multiple_outputs = (infer_multiple_outputs(function) if multiple_outputs is None
                                 else multiple_outputs)
        self.kwargs = dict(kwargs or {})
        self.kwargs.setdefault("task_id", function.__name__)
        self.__wrapped__ = function
        self.__name__ = getattr(function, "__name__", "task")
        self.__doc__ = function.__doc__

    @property
    def __signature__(self) -> inspect.Signature:
        return _signature(self.function)

    def __call__(self, *args: Any, **kwargs: Any) -> XComArg:
        op_kwargs = self._setup_teardown_kwargs()
        on_failure_fail_dagrun = op_kwargs.pop("on_failure_fail_dagrun", self.on_failure_fail_dagrun)
        op = self.operator_class(python_callable=self.function, op_args=args, op_kwargs=kwargs,
                                 multiple_outputs=self.multiple_outputs, **op_kwargs)
        self._mark(op, on_failure_fail_dagrun)
        _docstring_as_doc_md(op, self.function)
        return PlainXComArg(op)

    def _setup_teardown_kwargs(self) -> dict[str, Any]:
        """A teardown's rule is fixed: ``all_done_setup_success`` (Airflow refuses another one)."""
        kwargs = dict(self.kwargs)
        if self.is_teardown:
            if "trigger_rule" in kwargs:
                raise ValueError("Trigger rule not configurable for teardown tasks.")
            kwargs["trigger_rule"] = TriggerRule.ALL_DONE_SETUP_SUCCESS
        return kwargs

    def _mark(self, op: Any, on_failure_fail_dagrun: bool) -> None:
        # Each through its setter (they refuse a setup that is a teardown), when it changes: most tasks are
        # neither, and every task of a DAG file is marked at every import.
        if op.is_setup != self.is_setup:
            op.is_setup = self.is_setup
        if op.is_teardown != self.is_teardown:
            op.is_teardown = self.is_teardown
        if op.on_failure_fail_dagrun != on_failure_fail_dagrun:
            op.on_failure_fail_dagrun = on_failure_fail_dagrun

    def override(self, **kwargs: Any) -> TaskDecorator:
        multiple_outputs = kwargs.pop("multiple_outputs", self.multiple_outputs)
        result = type(self)(self.function, self.operator_class, multiple_outputs=multiple_outputs,
                            kwargs={**self.kwargs, **kwargs})
        result.is_setup, result.is_teardown = self.is_setup, self.is_teardown
        result.on_failure_fail_dagrun = self.on_failure_fail_dagrun
        return result

    def partial(self, **kwargs: Any) -> TaskDecoratorPartial:
        self._check_arg_names("partial", kwargs)
        return TaskDecoratorPartial(self, kwargs)

    def expand(self, **map_kwargs: Any) -> XComArg:
        return self.partial().expand(**map_kwargs)

    def expand_kwargs(self, kwargs: Any, *, strict: bool = True) -> XComArg:
        return self.partial().expand_kwargs(kwargs, strict=strict)

    def _check_arg_names(self, func: str, kwargs: Mapping[str, Any]) -> None:
        context_keys = sorted(KNOWN_CONTEXT_KEYS.intersection(kwargs))
        if len(context_keys) == 1:
            raise ValueError(f"cannot call {func}() on task context variable {context_keys[0]!r}")
        if context_keys:
            raise ValueError(f"cannot call {func}() on task context variables {', '.join(map(repr, context_keys))}")
        params = _signature(self.function).parameters
        if any(p.kind == p.VAR_KEYWORD for p in params.values()):
            return
        unknown = [name for name in kwargs if name not in params]
        if len(unknown) == 1:
            raise TypeError(f"{self.__name__}.{func}() got an unexpected keyword argument {unknown[0]!r}")
        if unknown:
            raise TypeError(f"{self.__name__}.{func}() got unexpected keyword arguments "
                            f"{', '.join(map(repr, unknown))}")


class TaskDecoratorPartial:
    """``my_task.partial(x=1)``: function arguments shared by every mapped instance."""

    def __init__(self, decorator: TaskDecorator, kwargs: dict[str, Any]) -> None:
        self.decorator = decorator
        self.kwargs = kwargs

    def expand(self, **map_kwargs: Any) -> XComArg:
        deco = self.decorator
        if deco.kwargs.get("trigger_rule") == TriggerRule.ALWAYS and any(
                isinstance(v, XComArg) for v in map_kwargs.values()):
            raise ValueError("Task-generated mapping within a task using 'expand' is not allowed with trigger "
                             "rule 'always'.")
        if not map_kwargs:
            raise TypeError("no arguments to expand against")
        deco._check_arg_names("expand", map_kwargs)
        for name, value in map_kwargs.items():
            if not is_mappable(value):
                raise ValueError(f"expand() got an unexpected type {type(value).__name__!r} for keyword argument "
                                 f"{name!r}")
        # Stricter than Airflow, which lets the mapped value silently win at run time.
        prevent_duplicates(self.kwargs, map_kwargs, fail_reason="mapping already partial")
        ensure_xcomarg_return_value(map_kwargs)
        # Every required argument must come from partial(), expand() or default_args (checked here, where
        # Airflow only finds out when each mapped instance runs).
        defaults = _callable_defaults(deco)
        bindable_signature(deco.function).bind(**{**defaults, **self.kwargs, **dict.fromkeys(map_kwargs)})
        return self._build(DictOfListsExpandInput(dict(map_kwargs)))

    def expand_kwargs(self, kwargs: Any, *, strict: bool = True) -> XComArg:
        if not isinstance(kwargs, XComArg):
            if not isinstance(kwargs, Sequence) or isinstance(kwargs, str) or not all(
                    isinstance(k, (Mapping, XComArg)) for k in kwargs):
                raise TypeError(f"expected XComArg or list[dict], not {type(kwargs).__name__}")
            for item in kwargs:
                if isinstance(item, Mapping):
                    self.decorator._check_arg_names("expand_kwargs", item)
        ensure_xcomarg_return_value(kwargs)
        return self._build(ListOfDictsExpandInput(kwargs))

    def _build(self, expand_input: Any) -> XComArg:
        deco = self.decorator
        op_kwargs = deco._setup_teardown_kwargs()
        on_failure_fail_dagrun = op_kwargs.pop("on_failure_fail_dagrun", deco.on_failure_fail_dagrun)
        dag = op_kwargs.pop("dag", None) or DagContext.current()
        group = op_kwargs.pop("task_group", None) or TaskGroupContext.current(dag)
        op_kwargs["task_id"] = get_unique_task_id(op_kwargs["task_id"], dag, group)
        partial_kwargs = {**op_kwargs, "python_callable": deco.function, "op_kwargs": dict(self.kwargs),
                          "multiple_outputs": deco.multiple_outputs}
        mapped = MappedOperator(deco.operator_class, partial_kwargs, expand_input, mapped_keys=[],
                                dag=dag, task_group=group,
                                prototype_kwargs={**partial_kwargs, "_updraft_mapped_prototype": True})
        mapped.expand_target = "op_kwargs"
        deco._mark(mapped, on_failure_fail_dagrun)
        _docstring_as_doc_md(mapped, deco.function)
        return PlainXComArg(mapped)


def _docstring_as_doc_md(task: Any, function: Callable) -> None:
    """The function's docstring documents the task unless a doc* argument already does (Airflow: verbatim)."""
    docs = (task.doc, task.doc_json, task.doc_md, task.doc_rst, task.doc_yaml)
    if function.__doc__ and not any(docs):
        task.doc_md = function.__doc__


def _callable_defaults(deco: TaskDecorator) -> dict[str, Any]:
    """The merged ``default_args`` entries named like the function's parameters."""
    dag = deco.kwargs.get("dag") or DagContext.current()
    group = deco.kwargs.get("task_group") or TaskGroupContext.current(dag)
    merged = merged_default_args(dag, group, deco.kwargs.get("default_args"))
    return {name: merged[name] for name in _signature(deco.function).parameters if name in merged}


def is_async_callable(func: Any) -> bool:
    """Whether ``func`` (possibly wrapped, or an object with an async ``__call__``) is a coroutine function."""
    func = inspect.unwrap(func.func if isinstance(func, functools.partial) else func)
    if not callable(func):
        return False
    if inspect.iscoroutinefunction(func):
        return True
    return not inspect.isfunction(func) and inspect.iscoroutinefunction(inspect.unwrap(type(func).__call__))


def task_decorator_factory(python_callable: Callable | None = None, *, multiple_outputs: bool | None = None,
                           decorated_operator_class: type[BaseOperator], **kwargs: Any) -> Any:
    """Airflow's factory of provider task decorators (``@task.sql``, ...): ``decorated_operator_class`` (a
    ``DecoratedOperator`` subclass) gets the decorated function as ``python_callable``."""
    return make_task_decorator(decorated_operator_class, python_callable, multiple_outputs, kwargs)


def make_task_decorator(operator_class: type[BaseOperator], python_callable: Callable | None,
                        multiple_outputs: bool | None, kwargs: dict[str, Any]) -> Any:
    """Support both ``@task`` and ``@task(...)``."""
    if "python_callable" in kwargs:
        raise AirflowException("python_callable cannot be passed to a @task decorator")

    def wrap(function: Callable) -> TaskDecorator:
        return TaskDecorator(function, operator_class, multiple_outputs=multiple_outputs, kwargs=kwargs)

    return wrap(python_callable) if python_callable is not None else wrap
