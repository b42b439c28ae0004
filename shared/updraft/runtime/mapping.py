"""Unmapping: the concrete operator one map index of a mapped task runs as (Airflow's ``MappedOperator.unmap``).

``expand(a=..., b=...)`` is the cross product of its arguments with the LAST argument varying fastest (Airflow's
``DictOfListsExpandInput._expand_mapped_field`` walks the keys in reverse), so ``expand(x=[1, 2], y=["a", "b"])``
gives (1,a), (1,b), (2,a), (2,b) for map indexes 0..3. A dict expands into its (key, value) items.
``expand_kwargs`` takes item ``map_index`` of its list. Values that came from XComs are reported back so the
renderer leaves them untemplated, as Airflow does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from updraft.runtime.xcom import resolve_args, resolve_xcom_arg
from updraft.sdk.mappedoperator import DictOfListsExpandInput, MappedOperator
from updraft.sdk.xcom_arg import MappedArgument, XComArg


class MappingError(RuntimeError):
    """A map index the expansion does not have, or an expansion value of the wrong shape."""


def _resolve(value: Any, context: Mapping[str, Any], from_xcom: set[int]) -> Any:
    if isinstance(value, XComArg):
        resolved = resolve_xcom_arg(value, context)
        from_xcom.add(id(resolved))
        return resolved
    return value


def _item(values: Any, index: int, what: str) -> Any:
    if isinstance(values, Mapping):
        for i, pair in enumerate(values.items()):
            if i == index:
                return pair
        raise MappingError(f"map index {index} is out of range for {what} (length {len(values)})")
    if isinstance(values, Sequence) and not isinstance(values, str):
        try:
            return values[index]
        except IndexError:
            raise MappingError(f"map index {index} is out of range for {what} (length {len(values)})") from None
    raise MappingError(f"{what} is not a list or dict but {type(values).__name__}; cannot map over it")


def expand_lengths(mapped: MappedOperator, context: Mapping[str, Any]) -> int:
    """How many instances the expansion has, from the resolved values (``expanded_ti_count``)."""
    expand_input = mapped.expand_input
    if isinstance(expand_input, DictOfListsExpandInput):
        total = 1
        for value in expand_input.value.values():
            total *= len(_resolve(value, context, set()))
        return total
    return len(_resolve(expand_input.value, context, set()))


def mapped_kwargs(mapped: MappedOperator, map_index: int,
                  context: Mapping[str, Any]) -> tuple[dict[str, Any], set[int]]:
    """The mapped arguments of one instance, and the ids of the values that came from XComs."""
    return expand_input_kwargs(mapped.expand_input, map_index, context)


def resolve_mapped_argument(arg: MappedArgument, context: Mapping[str, Any]) -> Any:
    """A mapped task group's argument for the running map index (Airflow's ``MappedArgument.resolve``).

    In nested mapped groups the map index runs over the product of the groups' lengths: ``expand`` arguments are
    taken at the index modulo their lengths (``wrap``), as Airflow's ``_expand_mapped_field`` does."""
    values, _ = expand_input_kwargs(arg.expand_input, context["ti"].map_index, context, wrap=True)
    if arg.key not in values:
        raise MappingError(f"expand_kwargs() item {context['ti'].map_index} has no value for {arg.key!r}")
    return values[arg.key]


def expand_input_kwargs(expand_input: Any, map_index: int, context: Mapping[str, Any],
                        wrap: bool = False) -> tuple[dict[str, Any], set[int]]:
    """The arguments ``expand``/``expand_kwargs`` give one map index, and the ids of the values from XComs."""
    from_xcom: set[int] = set()
    if isinstance(expand_input, DictOfListsExpandInput):
        resolved = {k: _resolve(v, context, from_xcom) for k, v in expand_input.value.items()}
        lengths = {k: len(v) for k, v in resolved.items()}
        out: dict[str, Any] = {}
        index = map_index
        for name in reversed(list(resolved)):
            length = lengths[name]
            if length < 1:
                raise MappingError(f"expand() argument {name!r} is empty: there is no map index {map_index}")
            out[name] = _item(resolved[name], index % length, f"expand() argument {name!r}")
            index //= length
        if index and not wrap:
            raise MappingError(f"map index {map_index} is beyond the expansion's {sum(lengths.values())} items")
        picked = {k: out[k] for k in resolved}
        for k, v in picked.items():
            if id(resolved[k]) in from_xcom:
                from_xcom.add(id(v))
        return picked, from_xcom
    value = _resolve(expand_input.value, context, from_xcom)
    item = _item(value, map_index, "expand_kwargs() input")
    if isinstance(item, XComArg):
        item = _resolve(item, context, from_xcom)
    if not isinstance(item, Mapping):
        raise MappingError(f"expand_kwargs() expects a list of dicts, item {map_index} is {type(item).__name__}")
    if id(value) in from_xcom or id(item) in from_xcom:
        from_xcom.update(id(v) for v in item.values())
    return {k: resolve_args(v, context) for k, v in item.items()}, from_xcom


def unmap(mapped: MappedOperator, map_index: int, context: Mapping[str, Any]) -> tuple[Any, set[int]]:
    """A detached operator instance with the partial and mapped arguments of ``map_index``."""
    values, from_xcom = mapped_kwargs(mapped, map_index, context)
    kwargs = dict(mapped.partial_kwargs)
    kwargs.pop("default_args", None)
    if mapped.expand_target == "op_kwargs":
        kwargs["op_kwargs"] = {**(kwargs.get("op_kwargs") or {}), **values}
        kwargs["_updraft_mapped_prototype"] = True
    else:
        kwargs.update(values)
    prototype = mapped.prototype
    op = mapped.operator_class(**kwargs, default_args=dict(getattr(prototype, "default_args", {}) or {}),
                               _updraft_detached=True)
    object.__setattr__(op, "task_id", mapped.task_id)
    object.__setattr__(op, "task_group", mapped.task_group)
    object.__setattr__(op, "_dag", mapped._dag)
    object.__setattr__(op, "params", mapped.params)
    object.__setattr__(op, "upstream_task_ids", set(mapped.upstream_task_ids))
    object.__setattr__(op, "downstream_task_ids", set(mapped.downstream_task_ids))
    return op, from_xcom
