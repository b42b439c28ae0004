"""Reads several routes share: a DAG or a run by id (404 in Airflow's words when absent), names, JSON safety."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from updraft.api.errors import dag_not_found, run_not_found
from updraft.api.routing import Call
from updraft.model.records import DagRun

if TYPE_CHECKING:
    from updraft.serialization.model import SerializedDAG
    from updraft.store.api import DagMeta

WILDCARD = "~"  # Airflow's "all" in a path segment


def dag_or_404(call: Call, dag_id: str) -> tuple[DagMeta, SerializedDAG | None]:
    """(meta, serialized DAG) of an active DAG; a DAG whose file no longer defines it is not found, as the
    trigger route has it (``updraft.scheduling.commands.triggering``)."""
    meta = call.store.get_dag_meta(dag_id)
    if meta is None:
        raise dag_not_found(dag_id)
    return meta, call.store.get_serialized_dag(dag_id, meta.dag_hash)


def run_version_or_404(call: Call, run: DagRun) -> SerializedDAG:
    """The DAG version ``run`` is pinned to; one the store no longer has is the DAG's 404 (no tasks to act on)."""
    sdag = call.store.get_serialized_dag(run.dag_id, run.dag_hash)
    if sdag is None:
        raise dag_not_found(run.dag_id)
    return sdag


def run_or_404(call: Call, dag_id: str, run_id: str) -> DagRun:
    run = call.store.get_run(dag_id, run_id)
    if run is None:
        raise run_not_found(dag_id, run_id)
    return run


def run_after(run: DagRun) -> dt.datetime:
    """Airflow's ``run_after`` of a run (required in its responses): the stored one, else the logical date, else
    when it was queued; every run is created queued, with ``queued_at``, so one of them is always set."""
    moment = run.run_after or run.logical_date or run.queued_at
    if moment is None:
        raise ValueError(f"run {run.dag_id}/{run.run_id} has no run_after, logical date or queued time")
    return moment


def display_name(sdag: Any, dag_id: str) -> str:
    return (getattr(sdag, "dag_display_name", None) or dag_id) if sdag is not None else dag_id


def jsonable(value: Any) -> Any:
    """A value as JSON can carry it (timedeltas and other objects in ``default_args`` become strings)."""
    return json.loads(json.dumps(value, default=str))


def field_keys(*names: str, aliases: dict[str, str] | None = None) -> dict[str, Callable[[Mapping[str, Any]], Any]]:
    """Sort keys over responses (a model's ``TypedDict`` too): each name orders by that field; an alias orders by
    another field."""
    def getter(name: str) -> Callable[[Mapping[str, Any]], Any]:
        return lambda response: response.get(name)

    keys = {name: getter(name) for name in names}
    for alias, target in (aliases or {}).items():
        keys[alias] = keys[target]
    return keys
