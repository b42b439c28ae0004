"""Storing a DAG's assets when its version is registered: the assets and aliases its schedule names (with the
DAG as a consumer) and its tasks' outlets (with the task as a producer) and inlets.

Airflow's DAG processor writes these rows (``AssetModel``, ``DagScheduleAssetReference``,
``TaskOutletAssetReference``) from the serialized DAG; here each is one idempotent update of the asset's item,
made only when a new version of the DAG is stored.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Mapping
from typing import Any

from updraft.scheduling.decisions.asset_conditions import leaves
from updraft.serialization.encoding import TaggedValue
from updraft.serialization.model import SerializedDAG
from updraft.store.api import Assets


def declare_dag_assets(store: Assets, dag: SerializedDAG, *, now: dt.datetime) -> None:
    condition = getattr(dag.timetable, "asset_condition", None)
    for leaf in leaves(condition) if condition else ():
        _declare(store, leaf, now=now, consumer=dag.dag_id)
    for task in dag.tasks:
        for outlet in _encoded(task.outlets):
            _declare(store, outlet, now=now, producer=f"{dag.dag_id}.{task.task_id}")
        for inlet in _encoded(task.inlets):
            _declare(store, inlet, now=now)


def _encoded(values: list[Any]) -> Iterator[Mapping[str, Any]]:
    """A task's outlets/inlets as condition leaves (they are kept as ``as_expression()`` tagged values)."""
    for value in values:
        if not isinstance(value, TaggedValue) or value.kind != "asset" or not isinstance(value.data, dict):
            continue
        data = value.data
        if "asset" in data:
            yield {"__type": "asset", **data["asset"]}
        elif "alias" in data:
            yield {"__type": "asset_alias", **data["alias"]}
        elif "asset_ref" in data:
            yield {"__type": "asset_ref", **data["asset_ref"]}


def _declare(store: Assets, leaf: Mapping[str, Any], *, now: dt.datetime, consumer: str | None = None,
             producer: str | None = None) -> None:
    kind = leaf.get("__type")
    if kind == "asset":
        name = str(leaf.get("name") or leaf.get("uri"))
        store.declare_asset(name=name, uri=str(leaf.get("uri") or name), group=str(leaf.get("group") or "asset"),
                            extra=leaf.get("extra") if "extra" in leaf else None, now=now, consumer=consumer,
                            producer=producer, watchers=leaf.get("watchers"))
    elif kind == "asset_alias":
        store.declare_alias(name=str(leaf["name"]), group=str(leaf.get("group") or "asset"), now=now,
                            consumer=consumer)
    elif kind == "asset_ref" and leaf.get("name"):
        store.declare_asset(name=str(leaf["name"]), uri=None, group=None, extra=None, now=now, consumer=consumer,
                            producer=producer)
