"""Asset-triggered runs: a DAG scheduled on assets runs once per batch of events that meets its condition.

Airflow's scheduler (``_create_dag_runs_asset_triggered``) takes the DAG's queued events (``AssetDagRunQueue``),
and when the DAG's condition is met creates one run (run_type ``asset_triggered``, no logical date, ``run_after``
the newest queued event's time) whose triggering events are those queued since its last asset-triggered run,
then empties the queue. Here the batch is claimed with one conditional write on the DAG's trigger cursor
(:mod:`updraft.store.assets`), so with any number of schedulers (and workers nudging right after a producer
succeeded) each batch becomes exactly one run; whoever finds a claim unfinished finishes it, so a crash between
the claim and the run loses nothing.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from updraft.model.records import DagRun
from updraft.model.states import DagRunState, DagRunType
from updraft.scheduling.asset_partitions import create_partitioned_runs
from updraft.scheduling.decisions.asset_conditions import evaluate
from updraft.serialization.model import SerializedDAG
from updraft.store.assets import AssetEvent, TriggerCursor
from updraft.store.attributes import ts

if TYPE_CHECKING:
    from updraft.store.api import Store as AssetStore

log = logging.getLogger(__name__)

DagFor = Callable[[str, str], SerializedDAG]


def asset_run_id(run_after: dt.datetime) -> str:
    """``asset_triggered__<run_after>``: derived from the batch, so every creator of it names the same run."""
    return f"{DagRunType.ASSET_TRIGGERED.value}__{ts(run_after)}"


def create_asset_triggered_runs(store: AssetStore, dag_for: DagFor, *, now: dt.datetime,
                                dag_ids: Iterable[str] | None = None) -> list[DagRun]:
    """Create the runs whose conditions the queued events meet (for ``dag_ids``, else every DAG with some), the
    partitioned DAGs' per partition key (:mod:`updraft.scheduling.asset_partitions`)."""
    dag_ids = None if dag_ids is None else list(dag_ids)
    listed = store.list_queued_keys() if dag_ids is None else None  # one query for both kinds of work
    created: list[DagRun] = []
    for dag_id in (store.dags_with_queued_events(listed) if dag_ids is None else dag_ids):
        try:
            run = trigger_dag_from_queue(store, dag_for, dag_id, now=now)
        except Exception:  # one DAG's bad version must not stop the others
            log.exception("asset-triggered run creation failed for DAG %s", dag_id)
            continue
        if run is not None:
            created.append(run)
    return created + create_partitioned_runs(store, dag_for, now=now, dag_ids=dag_ids, listed=listed)


def trigger_dag_from_queue(store: AssetStore, dag_for: DagFor, dag_id: str, *, now: dt.datetime) -> DagRun | None:
    """The run this call created for ``dag_id``'s queued events, or None (condition unmet, or another won)."""
    meta = store.get_dag_meta(dag_id)
    if meta is None or not meta.is_active:
        store.delete_queued(dag_id)  # Airflow drops a removed DAG's queue
        return None
    if meta.is_paused:
        return None  # stays queued: unpausing runs it
    dag = dag_for(dag_id, meta.dag_hash)
    condition = getattr(dag.timetable, "asset_condition", None)
    if not condition:
        store.delete_queued(dag_id)  # no longer scheduled on assets
        return None
    cursor, targets = store.read_queue(dag_id)
    created: DagRun | None = None
    if not cursor.done:
        created = _finish(store, dag_id, meta.dag_hash, cursor, now=now)
        cursor, targets = store.read_queue(dag_id)
    pending = [t for t in targets if t.events - cursor.refs]
    queued = {t.target for t in pending}
    if not evaluate(condition, queued, _uri_resolver(store)):
        return created
    run_after = max(t.created_at for t in pending)
    refs = frozenset().union(*(t.events - cursor.refs for t in pending))
    claimed = store.claim_batch(dag_id, expected=cursor, run_id=asset_run_id(run_after), run_after=run_after,
                                refs=refs)
    if claimed is None:
        return created  # another scheduler claimed this batch: it (or the next pass) creates the run
    return _finish(store, dag_id, meta.dag_hash, claimed, now=now) or created


def _finish(store: AssetStore, dag_id: str, dag_hash: str, cursor: TriggerCursor, *,
            now: dt.datetime) -> DagRun | None:
    """Create the claimed batch's run (with its events) and take its events off the queue; idempotent."""
    assert cursor.run_id is not None and cursor.run_after is not None
    events = sorted(filter(None, (_event(store, ref) for ref in cursor.refs)),
                    key=lambda e: (e.timestamp, e.event_id))
    # The events first: the run is never seen without them.
    store.put_triggering_events(dag_id, cursor.run_id, events)
    run = DagRun(dag_id=dag_id, run_id=cursor.run_id, run_type=DagRunType.ASSET_TRIGGERED.value, dag_hash=dag_hash,
                 state=DagRunState.QUEUED, run_after=cursor.run_after, queued_at=now)
    created = store.create_run(run)
    _, targets = store.read_queue(dag_id)
    store.finish_batch(dag_id, cursor, targets)
    return run if created else None


def _event(store: AssetStore, ref: str) -> AssetEvent | None:
    asset_id, _, event_id = ref.partition("#")
    return store.get_asset_event(int(asset_id), int(event_id))


def _uri_resolver(store: AssetStore) -> Callable[[str], str | None]:
    def resolve(uri: str) -> str | None:
        for asset in store.list_assets():
            if asset.uri == uri:
                return asset.name
        return None

    return resolve


def materialize(store: AssetStore, dag_id: str, *, now: dt.datetime) -> DagRun | None:
    """A run of the DAG that produces an asset (Airflow's ``POST /assets/{id}/materialize``); None: no such DAG."""
    meta = store.get_dag_meta(dag_id)
    if meta is None or not meta.is_active:
        return None
    run = DagRun(dag_id=dag_id, run_id=f"asset_materialization__{ts(now)}", run_type="asset_materialization",
                 dag_hash=meta.dag_hash, state=DagRunState.QUEUED, run_after=now, queued_at=now)
    store.create_run(run)
    return run
