"""How many instances a mapped task expands into, once the values it maps over are known.

Airflow's ``get_mapped_ti_count``: a literal list or dict counts its items; an XCom of an unmapped upstream counts
the length its worker recorded (``xcom_length``, Airflow's ``TaskMap.length``); an XCom of a mapped upstream
counts that upstream's instances that returned a value, once none of its instances is unfinished. ``expand``
over several arguments is their cross product (the product of lengths); ``expand_kwargs`` is the length of its
list. ``.map`` keeps its input's length, ``zip`` the shortest (the longest with a ``fillvalue``), ``concat`` the
sum; a task in nested mapped task groups, the product of the groups' lengths. None means "not known": not yet, or
never (an upstream that failed, a value the scheduler cannot see).
"""

from __future__ import annotations

import math
from typing import Any

from updraft.model.states import UNFINISHED_TI_STATES, TaskInstanceState
from updraft.scheduling.decisions.run_view import RunView
from updraft.serialization.encoding import XComConcatRef, XComMapRef, XComRef, XComZipRef
from updraft.serialization.model import SerializedTask

_LITERAL = (list, tuple, dict, set, frozenset)


def map_length(task: SerializedTask, view: RunView) -> int | None:
    return _input_length(task.expand_input or {}, view)


def _input_length(expand_input: dict[str, Any], view: RunView) -> int | None:
    value = expand_input.get("value")
    if expand_input.get("kind") == "nested-groups":  # a task in nested mapped groups: the product of theirs
        groups = [_input_length(group, view) for group in value or []]
        return None if any(n is None for n in groups) else math.prod(groups)  # type: ignore[arg-type]
    if expand_input.get("kind") == "list-of-dicts" or not isinstance(value, dict):
        return value_length(value, view)
    lengths = [value_length(v, view) for v in value.values()]
    if any(n is None for n in lengths):
        return None
    return math.prod(lengths)  # type: ignore[arg-type]


def value_length(value: Any, view: RunView) -> int | None:
    if isinstance(value, XComRef):
        return _xcom_length(value.task_id, view)
    if isinstance(value, XComMapRef):
        return value_length(value.arg, view)
    if isinstance(value, (XComZipRef, XComConcatRef)):
        lengths = [value_length(arg, view) for arg in value.args]
        if any(n is None for n in lengths) or not lengths:
            return None if lengths else 0
        if isinstance(value, XComConcatRef):
            return sum(lengths)  # type: ignore[arg-type]
        return min(lengths) if _is_notset(value.fillvalue) else max(lengths)  # type: ignore[type-var]
    if isinstance(value, _LITERAL):
        return len(value)
    return None  # a param reference or an opaque value: nothing the scheduler can count


def _is_notset(value: object) -> bool:
    # lazy: cold start (the scheduler loads the SDK's params only for this check)
    from updraft.sdk.param import NOTSET

    return value is NOTSET


def _xcom_length(task_id: str, view: RunView) -> int | None:
    upstream = view.tasks.get(task_id)
    if upstream is None:
        return None
    keys = view.instances(task_id)
    if upstream.is_mapped:
        if not keys or any(view.state(k) in UNFINISHED_TI_STATES for k in keys):
            return None  # not all of its instances are done yet
        return sum(1 for k in keys if k.map_index >= 0 and view.state(k) == TaskInstanceState.SUCCESS)
    if not keys or view.state(keys[0]) != TaskInstanceState.SUCCESS:
        return None
    ti = view.ti(keys[0])
    return ti.xcom_length if ti is not None else None


def complete_partial_expansions(view: RunView) -> None:
    """Give an expanded task every index it should have: an expansion interrupted half-way (a crash between the
    writes that create its instances) must not lose the instances that were never written."""
    for task_id in view.order:
        task = view.tasks[task_id]
        if task_id in view.in_run and task.is_mapped and view.is_expanded(task_id):
            n = map_length(task, view)
            if n:
                existing = [k.map_index for k in view.instances(task_id)]
                view.set_indexes(task_id, [*existing, *range(n)])
