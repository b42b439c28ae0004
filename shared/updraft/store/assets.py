"""The asset aggregate: definitions, events, and the per-DAG queue of events not yet turned into a run.

Items (``pk`` / ``sk``)::

    asset           ASSET#<asset_id>         META                 name, uri, group, extra, consumers, producers
    alias           ASSET_ALIAS#<name>       META                 name, group, consumers
    asset event     ASSET#<asset_id>         EVENT#<event_id>     timestamp, extra, source try, source aliases
    outlet events   RUN#<dag_id>#<run_id>    OUTLET#<task>#<map_index+1>#<try>   what a try will emit on success
    queued event    ASSET_QUEUE#<dag_id>     TARGET#<asset:name | alias:name>    event refs, created_at, version
    trigger cursor  ASSET_QUEUE#<dag_id>     CURSOR               the DAG's last asset-triggered batch
    triggering      DAG#<dag_id>             ASSET_TRIGGER#<run_id>   the events an asset-triggered run was made of

An asset's id is a stable 48-bit hash of its name (Airflow's names are unique among active assets), so every
process computes the same id without a sequence, and ``GET /assets/{id}`` is one ``GetItem``. An event's id is
its millisecond times 10^6 plus a hash of its source (as event logs), so events sort by time in their asset's
partition and a retried emission writes the same key (``attribute_not_exists``: recorded once).

The trigger cursor is what makes a batch of queued events become exactly one run with any number of
schedulers: a scheduler reads the cursor and the queue in one strongly consistent query (the cursor sorts
first), and claims the next batch with a single conditional write on the cursor (``batch = as read``). Only one
claim per batch wins; the winner, or anyone who later finds the claim unfinished, creates the run (its id is in
the claim, so creating it twice fails) and removes exactly the claimed refs from the queue.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pynamodb.expressions.update import Action

from updraft.model.records import TIKey
from updraft.store import keys
from updraft.store.asset_items import AssetItem, AssetModels, AssetQueueItem, asset_models
from updraft.store.attributes import parse_ts, ts
from updraft.store.base import StoreBase
from updraft.store.item_size import check_item_size
from updraft.store.writes import all_of, conditional, item_absent, item_present, update_quietly

_PER_MS = 10**6


def asset_id_of(name: str) -> int:
    """The asset's integer id: the same in every process, below 2^53 so JSON clients read it exactly."""
    return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=6).digest(), "big")


def asset_target(name: str) -> str:
    return f"asset:{name}"


def alias_target(name: str) -> str:
    return f"alias:{name}"


def event_id_of(when: dt.datetime, source: str) -> int:
    return int(when.timestamp() * 1000) * _PER_MS + zlib.crc32(source.encode()) % _PER_MS


@dataclass(frozen=True)
class AssetRecord:
    asset_id: int
    name: str
    uri: str
    group: str
    extra: dict[str, Any]
    created_at: dt.datetime | None
    updated_at: dt.datetime | None
    consumers: list[str] = field(default_factory=list)  # dag ids scheduled on it
    producers: list[str] = field(default_factory=list)  # "dag_id.task_id" with it as an outlet
    watchers: list[dict[str, Any]] = field(default_factory=list)  # {"name", "source": "sqs" | "s3", ...}


@dataclass(frozen=True)
class AliasRecord:
    name: str
    group: str
    consumers: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class AssetEvent:
    """One asset event, as Airflow's ``AssetEvent`` row and the API's ``AssetEventResponse`` have it."""

    event_id: int
    asset_id: int
    name: str
    uri: str
    group: str
    timestamp: dt.datetime
    extra: dict[str, Any] = field(default_factory=dict)
    source_dag_id: str | None = None
    source_task_id: str | None = None
    source_run_id: str | None = None
    source_map_index: int = -1
    source_aliases: list[str] = field(default_factory=list)
    partition_key: str | None = None  # the partition the event is for (asset partitions)
    partition_date: dt.datetime | None = None  # the producing run's partition date, when the key is the run's

    @property
    def ref(self) -> str:
        return f"{self.asset_id}#{self.event_id}"

    def as_dict(self) -> dict[str, Any]:
        return {"event_id": self.event_id, "asset_id": self.asset_id, "name": self.name, "uri": self.uri,
                "group": self.group, "timestamp": ts(self.timestamp), "extra": self.extra,
                "source_dag_id": self.source_dag_id, "source_task_id": self.source_task_id,
                "source_run_id": self.source_run_id, "source_map_index": self.source_map_index,
                "source_aliases": self.source_aliases, "partition_key": self.partition_key,
                "partition_date": ts(self.partition_date) if self.partition_date is not None else None}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AssetEvent:
        values = dict(data)
        values["timestamp"] = parse_ts(values["timestamp"])
        if values.get("partition_date"):
            values["partition_date"] = parse_ts(values["partition_date"])
        return cls(**values)


@dataclass(frozen=True)
class QueuedTarget:
    """What a DAG has queued for one asset (or alias): Airflow's ``AssetDagRunQueue`` row, with its events."""

    dag_id: str
    target: str
    asset_id: int | None
    created_at: dt.datetime
    events: frozenset[str]
    version: int


@dataclass(frozen=True)
class TriggerCursor:
    """The DAG's last claimed batch: ``done`` once its run exists and its refs left the queue."""

    batch: int = 0
    run_id: str | None = None
    run_after: dt.datetime | None = None
    refs: frozenset[str] = frozenset()
    done: bool = True


class AssetStore(StoreBase):
    @property
    def _assets(self) -> AssetModels:
        return asset_models(self.config)

    # -- definitions ------------------------------------------------------------------------------------------
    def declare_asset(self, *, name: str, uri: str | None, group: str | None, extra: Mapping[str, Any] | None,
                      now: dt.datetime, consumer: str | None = None, producer: str | None = None,
                      watchers: list[dict[str, Any]] | None = None) -> int:
        """Create or update the asset's definition (one idempotent update); returns its id. ``uri``, ``group``,
        ``extra`` and ``watchers`` left None keep what is stored (a reference by name knows only the name)."""
        A = self._assets.asset
        asset_id = asset_id_of(name)
        row = A(keys.asset_pk(asset_id), keys.META)
        actions: list[Action] = [A.kind.set("asset"), A.asset_id.set(asset_id), A.name.set(name), A.updated_at.set(now),
                   A.created_at.set(A.created_at | now), A.list_pk.set(keys.ASSETS_LIST_PK), A.list_sk.set(name)]
        if uri is not None:
            actions.append(A.uri.set(uri))
        if group is not None:
            actions.append(A.group.set(group))
        if extra is not None:
            actions.append(A.extra.set(dict(extra)))
        if watchers is not None:
            actions.append(A.watchers.set([dict(w) for w in watchers]))
        if consumer:
            actions.append(A.consumers.add({consumer}))
        if producer:
            actions.append(A.producers.add({producer}))
        update_quietly(row, actions, None)
        return asset_id

    def declare_alias(self, *, name: str, group: str, now: dt.datetime, consumer: str | None = None) -> None:
        A = self._assets.asset
        row = A(keys.asset_alias_pk(name), keys.META)
        actions: list[Action] = [A.kind.set("alias"), A.name.set(name), A.group.set(group), A.updated_at.set(now),
                   A.created_at.set(A.created_at | now), A.list_pk.set(keys.ASSET_ALIASES_LIST_PK), A.list_sk.set(name)]
        if consumer:
            actions.append(A.consumers.add({consumer}))
        update_quietly(row, actions, None)

    def get_asset(self, asset_id: int) -> AssetRecord | None:
        A = self._assets.asset
        try:
            return _asset_record(A.get(keys.asset_pk(asset_id), keys.META, consistent_read=True))
        except A.DoesNotExist:
            return None

    def get_alias(self, name: str) -> AliasRecord | None:
        A = self._assets.asset
        try:
            return _alias_record(A.get(keys.asset_alias_pk(name), keys.META, consistent_read=True))
        except A.DoesNotExist:
            return None

    def list_assets(self) -> list[AssetRecord]:
        A = self._assets.asset
        found = self._listed_keys(A.list_index, [keys.ASSETS_LIST_PK])
        return sorted((_asset_record(i) for i in self._batch_get(A, found)), key=lambda a: a.name)

    def list_aliases(self) -> list[AliasRecord]:
        A = self._assets.asset
        found = self._listed_keys(A.list_index, [keys.ASSET_ALIASES_LIST_PK])
        return sorted((_alias_record(i) for i in self._batch_get(A, found)), key=lambda a: a.name)

    # -- events -----------------------------------------------------------------------------------------------
    def put_outlet_events(self, key: TIKey, try_number: int, events: list[dict[str, Any]],
                          now: dt.datetime) -> None:
        """Keep what a try will emit, before its success is recorded (the first write for the try wins)."""
        E = self._assets.asset_event
        row = E(keys.run_pk(key.dag_id, key.run_id), keys.outlet_sk(key, try_number), timestamp=now,
                data={"events": events})
        conditional(lambda: row.save(item_absent(E)))

    def get_outlet_events(self, key: TIKey, try_number: int) -> tuple[dt.datetime, list[dict[str, Any]]] | None:
        E = self._assets.asset_event
        try:
            row = E.get(keys.run_pk(key.dag_id, key.run_id), keys.outlet_sk(key, try_number), consistent_read=True)
        except E.DoesNotExist:
            return None
        assert row.timestamp is not None
        return row.timestamp, list((row.data or {}).get("events", []))

    def put_asset_event(self, event: AssetEvent) -> bool:
        """Record the event; False when it was recorded before (a retried emission). ``ValueTooLarge`` when its
        extra does not fit one item."""
        E = self._assets.asset_event
        row = E(keys.asset_pk(event.asset_id), keys.event_sk(event.event_id), event_id=event.event_id,
                asset_id=event.asset_id, timestamp=event.timestamp, data=event.as_dict())
        check_item_size(row, f"the event of asset {event.name!r}")
        return conditional(lambda: row.save(item_absent(E)))

    def get_asset_event(self, asset_id: int, event_id: int) -> AssetEvent | None:
        E = self._assets.asset_event
        try:
            row = E.get(keys.asset_pk(asset_id), keys.event_sk(event_id), consistent_read=True)
        except E.DoesNotExist:
            return None
        return AssetEvent.from_dict(row.data or {})

    def list_asset_events(self, asset_id: int, *, limit: int | None = None) -> list[AssetEvent]:
        """The asset's events, oldest first (the newest ``limit`` of them when given)."""
        E = self._assets.asset_event
        items = E.query(keys.asset_pk(asset_id), E.sk.startswith(keys.EVENT_PREFIX), consistent_read=True,
                        scan_index_forward=limit is None, limit=limit)
        events = [AssetEvent.from_dict(i.data or {}) for i in items]
        return events if limit is None else events[::-1]

    # -- the queue --------------------------------------------------------------------------------------------
    def queue_event(self, dag_id: str, target: str, ref: str, *, asset_id: int | None, now: dt.datetime) -> None:
        """Add one event to what ``dag_id`` has queued for ``target`` (idempotent: the refs are a set)."""
        Q = self._assets.asset_queue
        row = Q(keys.asset_queue_pk(dag_id), keys.queued_target_sk(target))
        actions: list[Action] = [Q.dag_id.set(dag_id), Q.target.set(target), Q.created_at.set(now), Q.events.add({ref}),
                                 Q.version.add(1), Q.list_pk.set(keys.ASSET_QUEUES_LIST_PK),
                                 Q.list_sk.set(keys.queued_list_sk(dag_id, target))]
        if asset_id is not None:
            actions.append(Q.asset_id.set(asset_id))
        update_quietly(row, actions, None)

    def list_queued_keys(self) -> list[tuple[str, str]]:
        """The keys of every queued (dag, target) and pending partition (:mod:`updraft.store.asset_partitions`
        lists its items here too): the scheduler's one query per tick for all asset-triggered work."""
        Q = self._assets.asset_queue
        return self._listed_keys(Q.list_index, [keys.ASSET_QUEUES_LIST_PK])

    def dags_with_queued_events(self, listed: list[tuple[str, str]] | None = None) -> list[str]:
        """The DAGs with queued events, from ``listed`` (:meth:`list_queued_keys`) when the caller has it."""
        prefix = keys.asset_queue_pk("")
        found_keys = self.list_queued_keys() if listed is None else listed
        return sorted({pk[len(prefix):] for pk, _ in found_keys if pk.startswith(prefix)})

    def read_queue(self, dag_id: str) -> tuple[TriggerCursor, list[QueuedTarget]]:
        """The DAG's cursor and queued targets in one strongly consistent query (the cursor is read first)."""
        Q = self._assets.asset_queue
        cursor = TriggerCursor()
        targets: list[QueuedTarget] = []
        for item in Q.query(keys.asset_queue_pk(dag_id), consistent_read=True):
            if item.sk == keys.TRIGGER_CURSOR_SK:
                cursor = _cursor(item)
            elif item.events:
                targets.append(QueuedTarget(dag_id, item.target, int(item.asset_id) if item.asset_id is not None
                                            else None, item.created_at, frozenset(item.events), int(item.version)))
        return cursor, targets

    def claim_batch(self, dag_id: str, *, expected: TriggerCursor, run_id: str, run_after: dt.datetime,
                    refs: Iterable[str]) -> TriggerCursor | None:
        """Claim the next batch (one conditional write on the cursor); None when another claim won."""
        Q = self._assets.asset_queue
        claimed = TriggerCursor(batch=expected.batch + 1, run_id=run_id, run_after=run_after,
                                refs=frozenset(refs), done=False)
        # The claim lives in the cursor item's attributes: version = batch, events = refs, created_at = run_after,
        # target = run_id while pending and "done" once finished.
        row = Q(keys.asset_queue_pk(dag_id), keys.TRIGGER_CURSOR_SK, dag_id=dag_id, target=run_id, created_at=run_after,
                version=claimed.batch, events=set(claimed.refs) or None)
        condition = item_absent(Q) if expected.batch == 0 else Q.version == expected.batch
        return claimed if conditional(lambda: row.save(condition)) else None

    def finish_batch(self, dag_id: str, cursor: TriggerCursor, targets: Iterable[QueuedTarget]) -> None:
        """Remove the batch's refs from the queue (idempotent), then mark the cursor done."""
        Q = self._assets.asset_queue
        for target in targets:
            taken = set(target.events & cursor.refs)
            if not taken:
                continue
            row = Q(keys.asset_queue_pk(dag_id), keys.queued_target_sk(target.target))
            conditional(lambda row=row, taken=taken: update_quietly(row, [Q.events.delete(taken)],  # type: ignore[misc]
                                                                    item_present(Q)))
            if taken == set(target.events):  # nothing else queued: drop the item unless something arrived since
                conditional(lambda row=row, v=target.version: row.delete(  # type: ignore[misc]
                    all_of(Q.version == v, Q.events.does_not_exist())))
        cursor_row = Q(keys.asset_queue_pk(dag_id), keys.TRIGGER_CURSOR_SK)
        conditional(lambda: update_quietly(cursor_row, [Q.target.set("done")], Q.version == cursor.batch))

    def delete_queued(self, dag_id: str, target: str | None = None) -> int:
        """Drop what the DAG has queued (for one target, or all): the API's DELETE of queued events."""
        Q = self._assets.asset_queue
        _, targets = self.read_queue(dag_id)
        deleted = 0
        for queued in targets:
            if target is None or queued.target == target:
                row = Q(keys.asset_queue_pk(dag_id), keys.queued_target_sk(queued.target))
                deleted += conditional(lambda row=row: row.delete(item_present(Q)))  # type: ignore[misc]
        return deleted

    def queued_targets(self, dag_id: str) -> list[QueuedTarget]:
        return self.read_queue(dag_id)[1]

    # -- a run's triggering events ----------------------------------------------------------------------------
    def put_triggering_events(self, dag_id: str, run_id: str, events: list[AssetEvent]) -> None:
        E = self._assets.asset_event
        row = E(keys.dag_pk(dag_id), keys.asset_trigger_sk(run_id), data={"events": [e.as_dict() for e in events]})
        conditional(lambda: row.save(item_absent(E)))

    def get_triggering_events(self, dag_id: str, run_id: str) -> list[AssetEvent]:
        E = self._assets.asset_event
        try:
            row = E.get(keys.dag_pk(dag_id), keys.asset_trigger_sk(run_id), consistent_read=True)
        except E.DoesNotExist:
            return []
        return [AssetEvent.from_dict(e) for e in (row.data or {}).get("events", [])]


def _cursor(item: AssetQueueItem) -> TriggerCursor:
    done = item.target == "done"
    return TriggerCursor(batch=int(item.version), run_id=None if done else item.target, run_after=item.created_at,
                         refs=frozenset(item.events or ()), done=done)


def _asset_record(item: AssetItem) -> AssetRecord:
    return AssetRecord(asset_id=int(item.asset_id or 0), name=item.name, uri=item.uri or item.name,
                       group=item.group or "asset", extra=dict(item.extra or {}), created_at=item.created_at,
                       updated_at=item.updated_at,
                       consumers=sorted(item.consumers or ()), producers=sorted(item.producers or ()),
                       watchers=list(item.watchers or ()))


def _alias_record(item: AssetItem) -> AliasRecord:
    return AliasRecord(name=item.name, group=item.group or "asset", consumers=sorted(item.consumers or ()))
