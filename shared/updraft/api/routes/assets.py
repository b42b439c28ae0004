"""Assets: definitions, aliases, events (list and create), queued events, materialize; Airflow's asset routes.

Asset ids are Updraft's stable hashes of the asset's name (:func:`updraft.store.assets.asset_id_of`), alias ids
the same over ``alias:<name>``. ``POST /assets/events`` records an event exactly as a task's outlet does, so it
queues the DAGs scheduled on the asset and may create their runs at the next scheduler pass. Queued events are
the per-DAG queue (Airflow's ``asset_dag_run_queue``): only the assets with events not yet turned into a run.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import TYPE_CHECKING, Any

from updraft.api.body import Field, parse_body
from updraft.api.errors import Conflict, NotFound, Unprocessable
from updraft.api.formats import iso, pattern_matcher
from updraft.api.pagination import page_of, paginate
from updraft.api.routes.dag_runs import run_response
from updraft.api.routing import Call, Reply, RouteTable
from updraft.model.identifiers import ID_LEN
from updraft.store.assets import AssetEvent, AssetRecord, QueuedTarget, asset_id_of

if TYPE_CHECKING:
    from updraft.api.models import (
        AssetAliasCollectionResponse,
        AssetAliasResponse,
        AssetCollectionResponse,
        AssetEventCollectionResponse,
        AssetEventResponse,
        AssetResponse,
        AssetWatcherResponse,
        DAGRunResponse,
        QueuedEventCollectionResponse,
        QueuedEventResponse,
    )

routes = RouteTable()

ASSET_ORDER = {"id": lambda a: a.asset_id, "name": lambda a: a.name, "uri": lambda a: a.uri,
               "created_at": lambda a: a.created_at, "updated_at": lambda a: a.updated_at}
ALIAS_ORDER = {"id": lambda a: alias_id(a.name), "name": lambda a: a.name}
EVENT_ORDER = {"id": lambda e: e.event_id, "timestamp": lambda e: e.timestamp, "asset_id": lambda e: e.asset_id,
               "source_dag_id": lambda e: e.source_dag_id, "source_task_id": lambda e: e.source_task_id,
               "source_run_id": lambda e: e.source_run_id, "source_map_index": lambda e: e.source_map_index}
EVENT_BODY = {"asset_id": Field("int", required=True, nullable=False), "extra": Field("object"),
              "partition_key": Field("str", max_length=ID_LEN), "access_control": Field("object")}
# Airflow's AssetEventAccessControl: without [core] multi_team (Updraft has no teams) validated, then not used.
EVENT_ACCESS_CONTROL = {"consumer_teams": Field("strings"), "allow_global": Field("bool", nullable=False)}


def alias_id(name: str) -> int:
    return asset_id_of(f"alias:{name}")


def _asset(call: Call, asset_id: int) -> AssetRecord:
    asset = call.store.get_asset(asset_id)
    if asset is None:
        raise NotFound(f"The Asset with ID: `{asset_id}` was not found")
    return asset


def asset_response(call: Call, asset: AssetRecord) -> AssetResponse:
    created, updated = iso(asset.created_at), iso(asset.updated_at)
    if created is None or updated is None:  # Airflow requires both; every write of an asset sets them
        raise ValueError(f"asset {asset.name!r} has no created_at or updated_at")
    last = call.store.list_asset_events(asset.asset_id, limit=1)
    producing = [p.split(".", 1) for p in asset.producers]
    return {
        "id": asset.asset_id, "name": asset.name, "uri": asset.uri, "group": asset.group, "extra": asset.extra,
        "created_at": created, "updated_at": updated,
        "scheduled_dags": [{"dag_id": d, "created_at": created, "updated_at": updated} for d in asset.consumers],
        "producing_tasks": [{"dag_id": d, "task_id": t, "created_at": created, "updated_at": updated}
                            for d, t in producing],
        "consuming_tasks": [], "aliases": [], "watchers": [watcher_response(w, created) for w in asset.watchers],
        "last_asset_event": {"id": last[0].event_id, "timestamp": iso(last[0].timestamp)} if last else None,
    }


def watcher_response(watcher: dict[str, Any], created: str) -> AssetWatcherResponse:
    """Airflow's ``AssetWatcherResponse``. Updraft keeps no trigger rows (AWS delivers the events), so the trigger
    id is a stable hash of what the trigger watches: assets watching the same queue share it, as Airflow's
    deduplicated trigger row; the watcher is created with the asset's definition (``created``, its time)."""
    watch = json.dumps({k: v for k, v in watcher.items() if k != "name"}, sort_keys=True)
    return {"name": watcher["name"], "trigger_id": asset_id_of(f"trigger:{watch}"),
            "created_date": created}


def event_response(call: Call, event: AssetEvent) -> AssetEventResponse:
    return {
        "id": event.event_id, "asset_id": event.asset_id, "uri": event.uri, "name": event.name,
        "group": event.group, "extra": event.extra, "source_task_id": event.source_task_id,
        "source_dag_id": event.source_dag_id, "source_run_id": event.source_run_id,
        "source_map_index": event.source_map_index, "created_dagruns": [], "timestamp": iso(event.timestamp),
        "partition_key": event.partition_key,
    }


@routes.get("/assets")
def get_assets(call: Call) -> AssetCollectionResponse:
    page = page_of(call.query, ["id"])
    name = pattern_matcher(call.query.string("name_pattern"))
    uri = pattern_matcher(call.query.string("uri_pattern"))
    name_prefix = call.query.string("name_prefix_pattern") or ""
    uri_prefix = call.query.string("uri_prefix_pattern") or ""
    dag_ids = set(call.query.strings("dag_ids"))
    call.query.boolean("only_active")
    call.query.check()
    assets = [a for a in call.store.list_assets()
              if name(a.name) and uri(a.uri) and a.name.startswith(name_prefix) and a.uri.startswith(uri_prefix)
              and (not dag_ids or dag_ids & ({*a.consumers} | {p.split(".", 1)[0] for p in a.producers}))]
    found, total = paginate(assets, page, ASSET_ORDER)
    return {"assets": [asset_response(call, a) for a in found], "total_entries": total}


@routes.get("/assets/aliases")
def get_asset_aliases(call: Call) -> AssetAliasCollectionResponse:
    page = page_of(call.query, ["id"])
    name = pattern_matcher(call.query.string("name_pattern"))
    prefix = call.query.string("name_prefix_pattern") or ""
    call.query.check()
    aliases, total = paginate([a for a in call.store.list_aliases() if name(a.name) and a.name.startswith(prefix)],
                              page, ALIAS_ORDER)
    return {"asset_aliases": [{"id": alias_id(a.name), "name": a.name, "group": a.group} for a in aliases],
            "total_entries": total}


@routes.get("/assets/aliases/{asset_alias_id}")
def get_asset_alias(call: Call) -> AssetAliasResponse:
    wanted = call.int_path("asset_alias_id")
    for alias in call.store.list_aliases():
        if alias_id(alias.name) == wanted:
            return {"id": wanted, "name": alias.name, "group": alias.group}
    raise NotFound(f"The Asset Alias with ID: `{wanted}` was not found")


@routes.get("/assets/events")
def get_asset_events(call: Call) -> AssetEventCollectionResponse:
    page = page_of(call.query, ["timestamp"])
    asset_id = call.query.integer("asset_id")
    filters = {name: call.query.string(name) for name in ("source_dag_id", "source_task_id", "source_run_id")}
    map_index = call.query.integer("source_map_index")
    name = pattern_matcher(call.query.string("name_pattern"))
    prefix = call.query.string("name_prefix_pattern") or ""
    bounds = {op: call.query.datetime(f"timestamp_{op}") for op in ("gte", "gt", "lte", "lt")}
    call.query.check()
    assets = [a.asset_id for a in call.store.list_assets()] if asset_id is None else [asset_id]
    events = [e for a in assets for e in call.store.list_asset_events(a)
              if name(e.name) and e.name.startswith(prefix) and _within(e.timestamp, bounds)
              and all(v is None or getattr(e, k) == v for k, v in filters.items())
              and (map_index is None or e.source_map_index == map_index)]
    found, total = paginate(events, page, EVENT_ORDER)
    return {"asset_events": [event_response(call, e) for e in found], "total_entries": total}


def _within(when: dt.datetime, bounds: dict[str, dt.datetime | None]) -> bool:
    checks = {"gte": lambda b: when >= b, "gt": lambda b: when > b, "lte": lambda b: when <= b,
              "lt": lambda b: when < b}
    return all(b is None or checks[op](b) for op, b in bounds.items())


@routes.post("/assets/events")
def create_asset_event(call: Call) -> AssetEventResponse:
    """Record an event from outside (Airflow's manual asset event); a retried request records it once."""
    # lazy: cold start (the API's build imports every route module; scheduling only on this route)
    from updraft.scheduling import record_asset_event

    body = parse_body(call.request.body, EVENT_BODY)
    if body.get("access_control") is not None:
        _check_access_control(body["access_control"])
    asset = _asset(call, body["asset_id"])
    request_id = call.request.context.get("requestId") or call.now().isoformat()
    event, _ = record_asset_event(call.store, name=asset.name, uri=asset.uri, group=asset.group,
                                  source=f"api#{request_id}", timestamp=call.now(),
                                  extra={**(body.get("extra") or {}), "from_rest_api": True},
                                  partition_key=body.get("partition_key"))
    return event_response(call, event)


def _check_access_control(value: dict[str, Any]) -> None:
    """Airflow 3.3 filters the event's consumers by it only in multi-team mode; with that off, its default and
    Updraft's only mode, the value is checked as Airflow's model checks it and has no effect."""
    try:
        parse_body(json.dumps(value), EVENT_ACCESS_CONTROL)
    except Unprocessable as err:
        raise Unprocessable([{**i, "loc": ["body", "access_control", *i["loc"][1:]]} for i in err.detail]) from None


@routes.get("/assets/{asset_id}")
def get_asset(call: Call) -> AssetResponse:
    return asset_response(call, _asset(call, call.int_path("asset_id")))


@routes.post("/assets/{asset_id}/materialize")
def materialize_asset(call: Call) -> DAGRunResponse:
    """Run the one DAG that produces the asset (run_type ``asset_materialization``), as Airflow."""
    # lazy: cold start (the API's build imports every route module; scheduling only on this route)
    from updraft.scheduling import materialize

    asset = _asset(call, call.int_path("asset_id"))
    dag_ids = sorted({p.split(".", 1)[0] for p in asset.producers})
    if not dag_ids:
        raise NotFound(f"No DAG materializes asset with ID: {asset.asset_id}")
    if len(dag_ids) > 1:
        raise Conflict(f"More than one DAG materializes asset with ID: {asset.asset_id}")
    run = materialize(call.store, dag_ids[0], now=call.now())
    if run is None:
        raise NotFound(f"DAG with dag_id: '{dag_ids[0]}' not found")
    return run_response(run, dag_ids[0])


def queued_response(call: Call, queued: QueuedTarget) -> QueuedEventResponse:
    if queued.asset_id is None:  # an alias's queue: the listings keep only assets' (``_queued``)
        raise ValueError(f"{queued.dag_id}'s queued {queued.target} is no asset's")
    return {"dag_id": queued.dag_id, "asset_id": queued.asset_id, "created_at": iso(queued.created_at),
            "dag_display_name": queued.dag_id}


def _queued(call: Call, dag_ids: list[str], asset_id: int | None) -> list[QueuedTarget]:
    before = call.query.datetime("before")
    call.query.check()
    out = []
    for dag_id in dag_ids:
        for queued in call.store.queued_targets(dag_id):
            if queued.asset_id is None or (asset_id is not None and queued.asset_id != asset_id):
                continue
            if before is None or queued.created_at < before:
                out.append(queued)
    return out


def _consumers(call: Call, asset_id: int) -> list[str]:
    """The DAGs an asset schedules; none for an unknown asset (Airflow's GET lists nothing, its DELETE 404s)."""
    asset = call.store.get_asset(asset_id)
    return asset.consumers if asset is not None else []


def _collection(call: Call, items: list[QueuedTarget]) -> QueuedEventCollectionResponse:
    return {"queued_events": [queued_response(call, q) for q in items], "total_entries": len(items)}


def _delete(call: Call, items: list[QueuedTarget], what: str) -> Reply:
    if not items:
        raise NotFound(f"Queue event with {what} not found")
    for queued in items:
        call.store.delete_queued(queued.dag_id, queued.target)
    return Reply(204)


def _dag(call: Call, dag_id: str) -> str:
    if call.store.get_dag_meta(dag_id) is None:
        raise NotFound(f"DAG with dag_id: '{dag_id}' not found")
    return dag_id


@routes.get("/assets/{asset_id}/queuedEvents")
def get_asset_queued_events(call: Call) -> QueuedEventCollectionResponse:
    asset_id = call.int_path("asset_id")
    return _collection(call, _queued(call, _consumers(call, asset_id), asset_id))


@routes.delete("/assets/{asset_id}/queuedEvents")
def delete_asset_queued_events(call: Call) -> Reply:
    asset_id = call.int_path("asset_id")
    return _delete(call, _queued(call, _consumers(call, asset_id), asset_id), f"asset_id: `{asset_id}`")


@routes.get("/dags/{dag_id}/assets/queuedEvents")
def get_dag_asset_queued_events(call: Call) -> QueuedEventCollectionResponse:
    dag_id = call.path("dag_id")  # an unknown DAG has no queued events: 200 and an empty list, as Airflow's
    return _collection(call, _queued(call, [dag_id], None))


@routes.delete("/dags/{dag_id}/assets/queuedEvents")
def delete_dag_asset_queued_events(call: Call) -> Reply:
    dag_id = _dag(call, call.path("dag_id"))
    return _delete(call, _queued(call, [dag_id], None), f"dag_id: `{dag_id}`")


@routes.get("/dags/{dag_id}/assets/{asset_id}/queuedEvents")
def get_dag_asset_queued_event(call: Call) -> QueuedEventResponse:
    dag_id, asset_id = call.path("dag_id"), call.int_path("asset_id")
    found = _queued(call, [dag_id], asset_id)
    if not found:
        raise NotFound(f"Queued event with dag_id: `{dag_id}` and asset_id: `{asset_id}` was not found")
    return queued_response(call, found[0])


@routes.delete("/dags/{dag_id}/assets/{asset_id}/queuedEvents")
def delete_dag_asset_queued_event(call: Call) -> Reply:
    dag_id, asset_id = call.path("dag_id"), call.int_path("asset_id")
    return _delete(call, _queued(call, [dag_id], asset_id), f"dag_id: `{dag_id}` and asset_id: `{asset_id}`")


@routes.get("/dags/{dag_id}/dagRuns/{dag_run_id}/upstreamAssetEvents")
def get_upstream_asset_events(call: Call) -> AssetEventCollectionResponse:
    dag_id, run_id = call.path("dag_id"), call.path("dag_run_id")
    if call.store.get_run(dag_id, run_id) is None:
        raise NotFound(f"DAG Run with run_id: `{run_id}` was not found")
    events = call.store.get_triggering_events(dag_id, run_id)
    return {"asset_events": [event_response(call, e) for e in events], "total_entries": len(events)}

