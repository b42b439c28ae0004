"""What a try needs of its run's DAG version besides the DAG file: a few facts, not the whole serialized DAG.

A try's child imports its DAG file again (as Airflow's task runner parses it); of the serialized version it needs
only where that file is, which version of it the run is pinned to, and whether a downstream mapped task expands
over this task's return value (then the value must be a list or a dict). The worker holds the serialized DAG in
its cache and answers these facts (``store_proxy``'s ``try_dag``): a 200-task DAG's serialized form pickled to the
child and back into objects cost ~4 ms of CPU a try over both processes. The whole version is read only when user
code needs it (``RuntimeTaskInstance.serialized_dag``: a branch or a short-circuit deciding its skips).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from updraft.serialization.encoding import XComRef
from updraft.serialization.model import SerializedDAG
from updraft.store.api import Store


@dataclass(frozen=True)
class TryDag:
    """The facts of one task's DAG version a try runs with."""

    relative_fileloc: str
    file_hash: str | None
    maps_downstream: bool


def try_dag(store: Store, dag_id: str, dag_hash: str, task_id: str) -> TryDag | None:
    """The facts of version ``dag_hash`` of ``dag_id`` for ``task_id`` (None: no such version), from the store's
    cache of versions."""
    serialized = store.get_serialized_dag(dag_id, dag_hash)
    if serialized is None:
        return None
    return TryDag(serialized.relative_fileloc, serialized.file_hash, _maps_downstream(serialized, task_id))


def _maps_downstream(serialized_dag: SerializedDAG, task_id: str) -> bool:
    """Whether a downstream mapped task expands over this task's return value (then it must be a list/dict)."""
    for other in serialized_dag.task_dict.values():
        if task_id not in other.upstream_task_ids or not other.expand_input:
            continue
        stack: list[Any] = [other.expand_input.get("value")]  # the DAG author's expand arguments
        while stack:
            value = stack.pop()
            if isinstance(value, XComRef) and value.task_id == task_id:
                return True
            if isinstance(value, dict):
                stack.extend(value.values())
            elif isinstance(value, (list, tuple)):
                stack.extend(value)
            elif hasattr(value, "args"):
                stack.extend(value.args)
            elif hasattr(value, "arg"):
                stack.append(value.arg)
    return False
