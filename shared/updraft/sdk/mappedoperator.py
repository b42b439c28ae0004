"""Dynamic task mapping declarations: ``Operator.partial(...).expand(...)`` and ``expand_kwargs``.

A mapped task is one node in the DAG; the number of instances is only known at run time. At parse time the
shared (partial) arguments are validated by building a detached prototype of the operator, so a mapped task has
exactly the attributes (retries, pool, trigger_rule, ...) the same unmapped task would have.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from updraft.sdk._internal.contexts import DagContext, TaskGroupContext
from updraft.sdk.baseoperator import BaseOperator, merged_default_args, merged_params
from updraft.sdk.exceptions import UnsupportedFeatureError
from updraft.sdk.node import TaskNode
from updraft.sdk.taskgroup import mapped_group_enclosing
from updraft.sdk.xcom_arg import XCOM_RETURN_KEY, MappedArgument, PlainXComArg, XComArg

if TYPE_CHECKING:
    from updraft.sdk.dag import DAG
    from updraft.sdk.taskgroup import TaskGroup

# Airflow fills these into every ``partial()`` from its operator defaults, so ``expand()`` refuses them as
# "already specified": one value for all mapped instances.
_AIRFLOW_PARTIAL_DEFAULTS = frozenset({
    "allow_nested_operators", "depends_on_past", "email_on_failure", "email_on_retry", "execution_timeout",
    "executor_config", "ignore_first_depends_on_past", "inlets", "map_index_template", "max_retry_delay",
    "on_execute_callback", "on_failure_callback", "on_retry_callback", "on_skipped_callback",
    "on_success_callback", "outlets", "owner", "pool_slots", "priority_weight", "queue", "retries", "retry_delay",
    "retry_exponential_backoff", "retry_policy", "trigger_rule", "wait_for_past_depends_before_skipping",
    "wait_for_downstream", "weight_rule",
})
# Beyond Airflow's list: what identifies the task, and what the scheduler must know before the mapped
# instances exist (their pool, placement and concurrency limits, their dates).
NON_MAPPABLE = _AIRFLOW_PARTIAL_DEFAULTS | frozenset({
    "task_id", "dag", "task_group", "default_args", "params", "executor", "pool", "max_active_tis_per_dag",
    "max_active_tis_per_dagrun", "start_date", "end_date",
})


@dataclass(frozen=True)
class DictOfListsExpandInput:
    """``expand(a=[...], b=xcom)``: the cross product of every argument's values."""

    value: dict[str, Any]
    kind = "dict-of-lists"


@dataclass(frozen=True)
class ListOfDictsExpandInput:
    """``expand_kwargs([...] or xcom)``: one instance per dict of keyword arguments."""

    value: Any
    kind = "list-of-dicts"


ExpandInput = DictOfListsExpandInput | ListOfDictsExpandInput


def _init_keywords(operator_class: type) -> Iterator[inspect.Parameter]:
    """The named parameters of every ``__init__`` in the class hierarchy (a subclass may pass the rest on)."""
    for klass in operator_class.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        for name, param in inspect.signature(inspect.unwrap(init)).parameters.items():
            if name != "self" and param.kind not in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                yield param


def init_parameters(operator_class: type) -> set[str]:
    """Every keyword any ``__init__`` in the class hierarchy accepts."""
    return {param.name for param in _init_keywords(operator_class)}


def required_init_parameters(operator_class: type) -> set[str]:
    """Keywords some ``__init__`` in the class hierarchy requires (no default)."""
    return {param.name for param in _init_keywords(operator_class) if param.default is param.empty}


def is_mappable(value: Any) -> bool:
    """An XComArg, a mapped group's argument, or a collection that is not a string (Airflow's ``is_mappable``).

    A ``MappedArgument`` passes here, as in Airflow, so that expanding over it meets Airflow's own refusal."""
    if isinstance(value, (XComArg, MappedArgument)):
        return True
    return isinstance(value, (Sequence, dict)) and not isinstance(value, (str, bytes, bytearray))


def ensure_xcomarg_return_value(arg: Any) -> None:
    """Only a task's ``return_value`` can be mapped over, however deep the reference sits."""
    if isinstance(arg, XComArg):
        for operator, key in arg.iter_references():
            if key != XCOM_RETURN_KEY:
                raise ValueError(f"cannot map over XCom with custom key {key!r} from {operator}")
    elif isinstance(arg, Mapping):
        for value in arg.values():
            ensure_xcomarg_return_value(value)
    elif isinstance(arg, (list, tuple, set, frozenset)):
        for value in arg:
            ensure_xcomarg_return_value(value)


def prevent_duplicates(given: Any, mapped: Any, *, fail_reason: str) -> None:
    duplicated = sorted(set(given) & set(mapped))
    if len(duplicated) == 1:
        raise TypeError(f"{fail_reason} argument: {duplicated[0]}")
    if duplicated:
        raise TypeError(f"{fail_reason} arguments: {', '.join(duplicated)}")


class OperatorPartial:
    """The result of ``Operator.partial(...)``: arguments shared by all mapped instances."""

    def __init__(self, operator_class: type[BaseOperator], kwargs: dict[str, Any]) -> None:
        if "task_id" not in kwargs:
            raise TypeError(f"{operator_class.__name__}.partial() missing required keyword argument 'task_id'")
        accepted = init_parameters(operator_class)
        unknown = sorted(set(kwargs) - accepted)
        if unknown:
            raise TypeError(f"{operator_class.__name__}.partial() got an unexpected keyword argument "
                            f"'{unknown[0]}'")
        self.operator_class = operator_class
        self.kwargs = dict(kwargs)
        self.dag = self.kwargs.pop("dag", None) or DagContext.current()
        self.task_group = self.kwargs.pop("task_group", None) or TaskGroupContext.current(self.dag)
        self._expanded = False

    def _validate_expand_keys(self, func: str, keys: Sequence[str]) -> None:
        name = self.operator_class.__name__
        accepted = init_parameters(self.operator_class)
        unknown = [key for key in keys if key not in accepted]
        if len(unknown) == 1:
            raise TypeError(f"{name}.{func}() got an unexpected keyword argument {unknown[0]!r}")
        if unknown:
            raise TypeError(f"{name}.{func}() got unexpected keyword arguments {', '.join(map(repr, unknown))}")
        prevent_duplicates(self.kwargs.keys() | NON_MAPPABLE, keys, fail_reason="unmappable or already specified")

    def expand(self, **mapped_kwargs: Any) -> MappedOperator:
        if not mapped_kwargs:
            raise TypeError("no arguments to expand against")
        self._validate_expand_keys("expand", list(mapped_kwargs))
        for key, value in mapped_kwargs.items():
            if not is_mappable(value):
                raise ValueError(f"{self.operator_class.__name__}.expand() got an unexpected type "
                                 f"{type(value).__name__!r} for keyword argument {key}")
        ensure_xcomarg_return_value(mapped_kwargs)
        return self._build(DictOfListsExpandInput(dict(mapped_kwargs)), list(mapped_kwargs))

    def expand_kwargs(self, kwargs: Any, *, strict: bool = True) -> MappedOperator:
        if isinstance(kwargs, XComArg):
            ensure_xcomarg_return_value(kwargs)
            return self._build(ListOfDictsExpandInput(kwargs), [])
        if not isinstance(kwargs, Sequence) or isinstance(kwargs, str):
            raise TypeError(f"expected XComArg or list[dict], not {type(kwargs).__name__}")
        keys: set[str] = set()
        for item in kwargs:
            if isinstance(item, XComArg):
                continue
            if not isinstance(item, Mapping):
                raise TypeError(f"expected XComArg or list[dict], not list[{type(item).__name__}]")
            keys.update(item)
        if keys:
            self._validate_expand_keys("expand_kwargs", sorted(keys))
        ensure_xcomarg_return_value(kwargs)
        return self._build(ListOfDictsExpandInput(list(kwargs)), sorted(keys))

    def _build(self, expand_input: ExpandInput, mapped_keys: list[str]) -> MappedOperator:
        if self._expanded:
            raise RuntimeError("this partial() has already been expanded")
        self._expanded = True
        return MappedOperator(self.operator_class, self.kwargs, expand_input, mapped_keys=mapped_keys,
                              dag=self.dag, task_group=self.task_group)


def _operator_class_attribute(name: str) -> Any:
    """A read-only property answering from the mapped operator's class, which holds Airflow's per-class metadata."""
    return property(lambda self: getattr(self.operator_class, name))


class MappedTaskInMappedGroupError(UnsupportedFeatureError, NotImplementedError):
    """A mapped task inside a mapped task group: Airflow 3.3 refuses it when the task is created
    (``MappedOperator.__attrs_post_init__``) with this NotImplementedError, and so does Updraft, word for word."""

    def __init__(self, task_id: str, group_id: str | None) -> None:
        super().__init__("mapped tasks inside a mapped task group",
                         f"operator expansion in an expanded task group is not yet supported ({task_id!r} is "
                         f"expanded inside the mapped group {group_id!r}; pass its values through the group's "
                         "expand() instead)")


class MappedOperator(TaskNode):
    """One node standing for N task instances created at run time from ``expand_input``."""

    is_mapped = True
    # None: expand_input maps operator arguments; "op_kwargs": it maps a TaskFlow function's arguments.
    expand_target: str | None = None

    def __init__(self, operator_class: type[BaseOperator], partial_kwargs: dict[str, Any],
                 expand_input: ExpandInput, *, mapped_keys: list[str], dag: DAG | None,
                 task_group: TaskGroup | None, prototype_kwargs: dict[str, Any] | None = None) -> None:
        self._init_node()
        self._dag = None
        self.task_group = None
        self.operator_class = operator_class
        self.partial_kwargs = dict(partial_kwargs)
        self.expand_input = expand_input
        self.mapped_keys = list(mapped_keys)

        own_defaults = self.partial_kwargs.pop("default_args", None)
        defaults = merged_default_args(dag, task_group, own_defaults)
        # Detached: the prototype is never added to a DAG or group and never wires edges. Mapped arguments
        # are unknown until run time; with expand_kwargs(XComArg) even their names are, so any required
        # argument partial() left out may come from it.
        unknown_keys = set(mapped_keys)
        if isinstance(expand_input, ListOfDictsExpandInput) and prototype_kwargs is None:
            unknown_keys |= required_init_parameters(operator_class) - set(self.partial_kwargs) - {"task_id"}
        proto_kwargs = {**(prototype_kwargs or self.partial_kwargs),
                        **dict.fromkeys(unknown_keys - set(defaults), None)}
        proto_kwargs.pop("default_args", None)
        self.prototype: BaseOperator = operator_class(**proto_kwargs, default_args=defaults,
                                                      _updraft_detached=True)
        for attr, value in vars(self.prototype).items():
            if attr not in ("upstream_task_ids", "downstream_task_ids", "_dag", "task_group", "task_id",
                            "_init_kwargs", "_init_done") and attr not in mapped_keys:
                setattr(self, attr, value)
        # The prototype's links: its class's, or what its property or __init__ chose (Airflow reads the class's).
        self.operator_extra_links = self.prototype.operator_extra_links

        self.params = merged_params(dag, self.partial_kwargs.get("params"), own_defaults)
        self.task_id = task_group.child_id(self.prototype.task_id) if task_group else self.prototype.task_id
        mapped_group = mapped_group_enclosing(task_group)
        if mapped_group is not None:
            raise MappedTaskInMappedGroupError(self.task_id, mapped_group.group_id)
        if task_group is not None:
            task_group.add(self)
        if dag is not None:
            self.dag = dag
        for value in [*self.partial_kwargs.values(), expand_input.value]:
            XComArg.apply_upstream_relationship(self, value)

    # The operator's class-level metadata, so a mapped task reads like its operator everywhere.
    task_type = _operator_class_attribute("__name__")
    operator_name = _operator_class_attribute("__name__")
    template_fields = _operator_class_attribute("template_fields")
    template_ext = _operator_class_attribute("template_ext")
    template_fields_renderers = _operator_class_attribute("template_fields_renderers")
    ui_color = _operator_class_attribute("ui_color")
    ui_fgcolor = _operator_class_attribute("ui_fgcolor")
    extra_serialized_fields = _operator_class_attribute("extra_serialized_fields")
    inherits_from_empty_operator = _operator_class_attribute("inherits_from_empty_operator")
    _can_skip_downstream = _operator_class_attribute("_can_skip_downstream")
    _is_sensor = _operator_class_attribute("_is_sensor")
    custom_operator_name = _operator_class_attribute("custom_operator_name")  # "@task" for a mapped @task

    @property
    def label(self) -> str:
        return self.prototype.label if self.task_group is None else super().label

    @property
    def task_display_name(self) -> str:
        return self.prototype._task_display_name or self.task_id  # Airflow: the full id, as for BaseOperator

    @property
    def python_callable_name(self) -> str | None:
        return self.prototype.python_callable_name

    @property
    def output(self) -> PlainXComArg:
        return PlainXComArg(self)

    def expand_arg_names(self) -> list[str]:
        return list(self.mapped_keys)
