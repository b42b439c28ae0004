"""Partitioned asset-triggered runs: a DAG on ``PartitionedAssetTimetable`` runs once per downstream partition key.

Airflow's ``AssetManager._queue_partitioned_dags`` maps each event's partition key through the consumer's mapper
for that asset (``to_downstream``: one key, or several for a fan-out) and logs the event against the consumer's
pending run for each key; its scheduler (``_create_dagruns_for_partitioned_asset_dags``) then turns every pending
key whose asset condition holds into one run (``asset_triggered``, no logical date, ``partition_key`` set), oldest
first. For a rollup mapper an asset counts as arrived only once its wait policy accepts the upstream keys logged
so far against the window ``to_upstream`` names. Here the pending runs are :mod:`updraft.store.asset_partitions`
items, claimed with one conditional write each, so with any number of schedulers each becomes exactly one run.

Everything the scheduler evaluates is the parser's serialized timetable: built-in mappers only, no user code.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from updraft.model.records import DagRun
from updraft.model.states import DagRunState, DagRunType
from updraft.scheduling.dag_versions import pinned_dag
from updraft.scheduling.decisions.asset_conditions import evaluate
from updraft.store.asset_partitions import PartitionLog, PendingPartition
from updraft.store.assets import AssetEvent, asset_target
from updraft.store.attributes import ts
from updraft.timetables.partitioned import PartitionedAssetTimetable
from updraft.timetables.partitions.mappers import PartitionMapper, is_rollup

if TYPE_CHECKING:
    from updraft.serialization.model import SerializedDAG
    from updraft.store.api import DagMeta, Store

log = logging.getLogger(__name__)

# Airflow's ``[scheduler] partition_mapper_max_downstream_keys`` default: the most keys one event may fan out to
# when the mapper sets no ``max_downstream_keys`` of its own.
MAX_DOWNSTREAM_KEYS = 1000

DagFor = Callable[[str, str], "SerializedDAG"]


def partitioned_timetable(store: Store, meta: DagMeta) -> PartitionedAssetTimetable | None:
    """The DAG's timetable when it is scheduled on partitioned assets, else None."""
    timetable = pinned_dag(store, meta.dag_id, meta.dag_hash).timetable
    return timetable if isinstance(timetable, PartitionedAssetTimetable) else None


def downstream_keys(mapper: PartitionMapper, partition_key: str) -> list[str]:
    """The keys ``partition_key`` maps to, refused (ValueError) beyond the mapper's or the global fan-out cap."""
    mapped = mapper.to_downstream(partition_key)
    keys = [mapped] if isinstance(mapped, str) else list(mapped)
    cap = mapper.max_downstream_keys or MAX_DOWNSTREAM_KEYS
    if len(keys) > cap:
        raise ValueError(f"partition fan-out exceeded: {len(keys)} downstream keys from partition_key "
                         f"{partition_key!r}, more than max_downstream_keys={cap}")
    return keys


def queue_partitions(store: Store, dag_id: str, timetable: PartitionedAssetTimetable, event: AssetEvent, *,
                     now: dt.datetime) -> bool:
    """Log the event against ``dag_id``'s pending run of each key its partition maps to; False when none (or
    when runs were already made of it: a redelivered event).

    As Airflow, an event without a partition key, or one its mapper cannot map, queues nothing (logged, not
    raised: the producer's success stands)."""
    if event.partition_key is None:
        log.warning("DAG %s is partition-aware but the event of asset %s (run %s of %s) has no partition key",
                    dag_id, event.name, event.source_run_id, event.source_dag_id)
        return False
    mapper = timetable.get_partition_mapper(name=event.name, uri=event.uri)
    try:
        keys = downstream_keys(mapper, event.partition_key)
        carried = mapper.carry_partition_date(event.partition_date)
    except Exception:
        log.exception("Could not map partition_key %r of asset %s for DAG %s", event.partition_key, event.name,
                      dag_id)
        return False
    entry = PartitionLog(event.asset_id, event.event_id, event.partition_key, carried)
    return any([store.queue_partition(dag_id, key, entry, now=now) for key in keys])


def create_partitioned_runs(store: Store, dag_for: DagFor, *, now: dt.datetime,
                            dag_ids: Iterable[str] | None = None,
                            listed: list[tuple[str, str]] | None = None) -> list[DagRun]:
    """Create the runs of every pending partition (of ``dag_ids``, else of every DAG: those among ``listed``, the
    asset queue's keys, when the caller has read them) whose condition holds."""
    wanted = None if dag_ids is None else set(dag_ids)
    pending = (store.pending_partitions(listed=listed) if wanted is None
               else [p for dag_id in sorted(wanted) for p in store.pending_partitions(dag_id)])
    created: list[DagRun] = []
    for partition in sorted(pending, key=lambda p: (p.created_at, p.dag_id, p.partition_key)):
        try:
            run = _trigger_partition(store, dag_for, partition, now=now)
        except Exception:  # one DAG's bad version or mapper must not stop the others
            log.exception("partitioned run creation failed for DAG %s, partition %s", partition.dag_id,
                          partition.partition_key)
            continue
        if run is not None:
            created.append(run)
    return created


def _trigger_partition(store: Store, dag_for: DagFor, partition: PendingPartition, *,
                       now: dt.datetime) -> DagRun | None:
    meta = store.get_dag_meta(partition.dag_id)
    if meta is None or not meta.is_active or meta.is_paused:
        return None  # stays pending: unpausing runs it
    if partition.run_id is not None:  # a claim nobody finished (its claimer died): finish it; what arrived since
        return _finish(store, meta.dag_hash, partition, dag_for, now=now)  # waits for the next pass
    timetable = dag_for(partition.dag_id, meta.dag_hash).timetable
    if not isinstance(timetable, PartitionedAssetTimetable) or not partition.logs:
        return None
    if not _condition_holds(store, timetable, partition):
        return None
    run_id = partition_run_id(now, partition)
    claim = store.claim_partition(partition, run_id=run_id, run_after=now, logs=partition.logs)
    if claim is None:
        return None  # another scheduler claimed it: it (or the next pass) creates the run
    return _finish(store, meta.dag_hash, claim, dag_for, now=now)


def partition_run_id(run_after: dt.datetime, partition: PendingPartition) -> str:
    """``asset_triggered__<run_after>_<suffix>``: Airflow's shape (it adds a random suffix because runs without a
    logical date may share a ``run_after``); here the suffix comes from the key and its item's version, so two
    keys fired together get different ids and every finisher of one claim names the same run."""
    digest = hashlib.blake2b(f"{partition.partition_key}#{partition.version}".encode(), digest_size=4).hexdigest()
    return f"{DagRunType.ASSET_TRIGGERED.value}__{ts(run_after)}_{digest}"


def _asset_names(store: Store, logs: list[PartitionLog]) -> dict[int, tuple[str, str]]:
    names: dict[int, tuple[str, str]] = {}
    for entry in logs:
        if entry.asset_id not in names and (asset := store.get_asset(entry.asset_id)) is not None:
            names[entry.asset_id] = (asset.name, asset.uri)
    return names


def _condition_holds(store: Store, timetable: PartitionedAssetTimetable, partition: PendingPartition) -> bool:
    """Airflow's status per asset with logged events (a rollup's only once its wait policy is met), then the
    DAG's asset condition over those statuses."""
    logs = partition.decoded()
    source_keys: dict[int, set[str]] = defaultdict(set)
    for entry in logs:
        source_keys[entry.asset_id].add(entry.source_key)
    arrived: set[str] = set()
    for asset_id, (name, uri) in _asset_names(store, logs).items():
        if _asset_satisfied(timetable.get_partition_mapper(name=name, uri=uri), partition, source_keys[asset_id]):
            arrived.add(asset_target(name))
    assert timetable.asset_condition is not None
    return evaluate(timetable.asset_condition, arrived, _uri_resolver(store))


def _asset_satisfied(mapper: PartitionMapper, partition: PendingPartition, source_keys: set[str]) -> bool:
    if not is_rollup(mapper):
        return True
    try:
        result = mapper.wait_policy.is_satisfied_by_keys(matched=source_keys,
                                                         expected=mapper.to_upstream(partition.partition_key))
    except Exception:  # a mapper that cannot decode the key: not yet satisfied, as Airflow
        log.exception("Failed to evaluate rollup status for DAG %s, partition %s", partition.dag_id,
                      partition.partition_key)
        return False
    if result.unreachable:
        log.warning("Rollup partition %s of DAG %s is permanently unreachable: %s", partition.partition_key,
                    partition.dag_id, result.unreachable_reason)
        return False
    return result.satisfied


def _uri_resolver(store: Store) -> Callable[[str], str | None]:
    def resolve(uri: str) -> str | None:
        return next((a.name for a in store.list_assets() if a.uri == uri), None)

    return resolve


def partition_date_of(timetable: PartitionedAssetTimetable, names: Iterable[tuple[str, str]], partition_key: str,
                      carried: Iterable[dt.datetime]) -> dt.datetime | None:
    """Airflow's ``_resolve_partition_date``: the anchor the contributing assets' mappers agree on; with no
    temporal mapper, the producers' carried date when they agree; None when they conflict or a mapper fails."""
    try:
        anchors = {anchor for name, uri in names
                   if (anchor := timetable.get_partition_mapper(name=name, uri=uri).to_partition_date(partition_key))
                   is not None}
    except Exception:
        log.exception("Failed to resolve partition_date for partition %s", partition_key)
        return None
    if not anchors:
        dates = set(carried)
        return dates.pop() if len(dates) == 1 else None
    return anchors.pop() if len(anchors) == 1 else None


def _finish(store: Store, dag_hash: str, claim: PendingPartition, dag_for: DagFor, *,
            now: dt.datetime) -> DagRun | None:
    """Create the claimed run with its triggering events, then take its logs off the item; idempotent."""
    assert claim.run_id is not None and claim.run_after is not None
    logs = claim.decoded(claim.claimed)
    events = sorted(filter(None, (store.get_asset_event(e.asset_id, e.event_id) for e in logs)),
                    key=lambda e: (e.timestamp, e.event_id))
    unique = list({e.ref: e for e in events}.values())
    timetable = dag_for(claim.dag_id, dag_hash).timetable
    partition_date = None
    if isinstance(timetable, PartitionedAssetTimetable):
        partition_date = partition_date_of(timetable, _asset_names(store, logs).values(), claim.partition_key,
                                           (e.carried_date for e in logs if e.carried_date is not None))
    store.put_triggering_events(claim.dag_id, claim.run_id, unique)  # the events first: never a run without them
    run = DagRun(dag_id=claim.dag_id, run_id=claim.run_id, run_type=DagRunType.ASSET_TRIGGERED.value,
                 dag_hash=dag_hash, state=DagRunState.QUEUED, run_after=claim.run_after, queued_at=now,
                 partition_key=claim.partition_key, partition_date=partition_date)
    created = store.create_run(run)
    store.finish_partition(claim)
    return run if created else None
