"""Recording asset events and queueing them for the DAGs scheduled on them (Airflow's ``AssetManager``).

Every source goes through :func:`record_asset_event`: a task's outlets once its try succeeded
(:func:`publish_outlet_events`), ``POST /assets/events``, an S3 upload or an SQS message. The event's id comes
from its time and source, so recording one twice (a redelivered Lambda event, a retried request) writes nothing
new; queueing adds the event to a set, so it is idempotent too. As Airflow, paused or removed DAGs get nothing
queued.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from updraft.model.records import TIKey
from updraft.scheduling.asset_partitions import partitioned_timetable, queue_partitions
from updraft.store.assets import AssetEvent, alias_target, asset_target, event_id_of
from updraft.store.attributes import parse_ts

if TYPE_CHECKING:
    from updraft.store.api import Store
    from updraft.timetables.partitioned import PartitionedAssetTimetable


def record_asset_event(store: Store, *, name: str, uri: str, group: str = "asset", source: str,
                       timestamp: dt.datetime, extra: Mapping[str, Any] | None = None,
                       source_key: TIKey | None = None, aliases: Iterable[str] = (), partition_key: str | None = None,
                       partition_date: dt.datetime | None = None) -> tuple[AssetEvent, set[str]]:
    """Record one event and queue it; returns it and the DAG ids it was queued for."""
    asset_id = store.declare_asset(name=name, uri=uri, group=group, extra=None, now=timestamp)
    event = AssetEvent(
        event_id=event_id_of(timestamp, source), asset_id=asset_id, name=name, uri=uri, group=group,
        timestamp=timestamp, extra=dict(extra or {}),
        source_dag_id=source_key.dag_id if source_key else None,
        source_task_id=source_key.task_id if source_key else None,
        source_run_id=source_key.run_id if source_key else None,
        source_map_index=source_key.map_index if source_key else -1,
        source_aliases=sorted(set(aliases)), partition_key=partition_key, partition_date=partition_date,
    )
    store.put_asset_event(event)
    return event, queue_for_consumers(store, event, now=timestamp)


def queue_for_consumers(store: Store, event: AssetEvent, *, now: dt.datetime) -> set[str]:
    """Queue the event for every unpaused, active DAG scheduled on its asset or on an alias it came through: a
    DAG on partitioned assets gets it under the partition key its mapper names (:mod:`.asset_partitions`), any
    other DAG only an event with no partition key, as Airflow's ``AssetManager._queue_dagruns``."""
    queued: set[str] = set()
    asset = store.get_asset(event.asset_id)
    wanted = [(asset_target(event.name), dag_id) for dag_id in (asset.consumers if asset else ())]
    for alias_name in event.source_aliases:
        alias = store.get_alias(alias_name)
        wanted += [(alias_target(alias_name), dag_id) for dag_id in (alias.consumers if alias else ())]
    live: dict[str, bool] = {}
    partitioned: dict[str, PartitionedAssetTimetable | None] = {}
    for target, dag_id in wanted:
        if dag_id not in live:
            meta = store.get_dag_meta(dag_id)
            live[dag_id] = meta is not None and meta.is_active and not meta.is_paused
            partitioned[dag_id] = partitioned_timetable(store, meta) if live[dag_id] and meta else None
        timetable = partitioned[dag_id]
        if not live[dag_id]:
            continue
        if timetable is not None:
            if target.startswith("asset:") and queue_partitions(store, dag_id, timetable, event, now=now):
                queued.add(dag_id)
        elif event.partition_key is None:  # as Airflow: an event with a partition key queues no plain DAG
            store.queue_event(dag_id, target, event.ref,
                              asset_id=event.asset_id if target.startswith("asset:") else None, now=now)
            queued.add(dag_id)
    return queued


def publish_outlet_events(store: Store, key: TIKey, try_number: int) -> set[str]:
    """Emit what the try kept with ``put_outlet_events`` (call once its success is recorded); idempotent.

    Returns the DAG ids events were queued for (the caller may nudge them into runs at once).
    """
    kept = store.get_outlet_events(key, try_number)
    if kept is None:
        return set()
    timestamp, events = kept
    consumers: set[str] = set()
    for i, spec in enumerate(events):
        source = f"{key.dag_id}#{key.run_id}#{key.task_id}#{key.map_index}#{try_number}#{i}"
        _, queued = record_asset_event(store, name=spec["name"], uri=spec["uri"], group=spec.get("group", "asset"),
                                       source=source, timestamp=timestamp, extra=spec.get("extra"),
                                       source_key=key, aliases=spec.get("aliases", ()),
                                       partition_key=spec.get("partition_key"),
                                       partition_date=parse_ts(spec["partition_date"]) if spec.get("partition_date")
                                       else None)
        consumers |= queued
    return consumers
