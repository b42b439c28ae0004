"""The task and asset state stores (Airflow 3.3's AIP-103) over REST, as Airflow's ``Task State Store`` and ``Asset
State Store`` routes: ``.../taskInstances/{task_id}/state-store[/{key}]`` (``map_index`` in the query, -1 by
default) and ``/assets/{asset_id}/state-store[/{key}]``.

As in Airflow: listing and reading need no task instance (an unknown one lists nothing); writing, patching and
deleting 404 unless the task instance exists; a ``PUT`` body's ``expires_at`` is ``"default"`` (``[state_store]
default_retention_days``), null (never) or an aware datetime; ``PATCH`` changes only the value of an existing key;
a value is any JSON but null, at most ``[state_store] max_value_storage_bytes`` (65535) serialized. Asset routes
404 for an asset id no DAG declared; a write records the API as its last writer. Unlike Airflow's, a key past its
expiry is not shown (Updraft checks expiry on every read; DynamoDB's TTL removes it later).
"""

from __future__ import annotations

import datetime as dt
import json
from typing import TYPE_CHECKING, Any

from updraft.api.body import Field, parse_body
from updraft.api.errors import NotFound, Unprocessable, issue
from updraft.api.formats import iso, parse_datetime
from updraft.api.routes.task_instances import run_instances
from updraft.api.routing import Call, Reply, RouteTable
from updraft.model.records import UNMAPPED, TIKey
from updraft.store.state_stores import StateEntry, default_expiry, max_value_bytes

if TYPE_CHECKING:
    from updraft.api.models import (
        AssetStateStoreCollectionResponse,
        AssetStateStoreResponse,
        TaskStateStoreCollectionResponse,
        TaskStateStoreResponse,
    )

routes = RouteTable()

TASK = "/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/state-store"
ASSET = "/assets/{asset_id}/state-store"
VALUE = {"value": Field("json", required=True)}


def _scope(call: Call) -> TIKey:
    map_index = call.query.integer("map_index", UNMAPPED, ge=UNMAPPED)
    return TIKey(call.path("dag_id"), call.path("dag_run_id"), call.path("task_id"), map_index)


def _require_instance(call: Call, key: TIKey, *, any_index: bool = False) -> list[TIKey]:
    """The task instances addressed (one, or every map index of the task), as the task instance routes see them
    (a run's tasks not yet scheduled included, as Airflow creates their rows with the run); 404 when none."""
    run = call.store.get_run(key.dag_id, key.run_id)
    instances = [] if run is None else run_instances(call, run, call.store.get_serialized_dag(run.dag_id,
                                                                                              run.dag_hash))
    found = [ti.key for ti in instances if ti.key.task_id == key.task_id and (any_index or ti.key == key)]
    if not found:
        addressed = "all_map_indices=True" if any_index else f"map_index={key.map_index}"
        raise NotFound(f"Task instance not found for dag_id={key.dag_id!r}, run_id={key.run_id!r}, "
                       f"task_id={key.task_id!r}, {addressed}")
    return found


def _value(body: dict[str, Any]) -> Any:
    """The body's value, as Airflow's validator checks it (422: null, NaN/Inf, past the size limit)."""
    value = body["value"]
    problem = None
    if value is None:
        problem = "Value error, value cannot be null"
    else:
        try:
            size = len(json.dumps(value, allow_nan=False))
        except ValueError:
            size, problem = 0, ("Value error, value contains non-finite numbers; NaN and Inf are not JSON "
                                "representable")
        limit = max_value_bytes()
        if problem is None and 0 < limit < size:
            problem = (f"Value error, value exceeds max_value_storage_bytes ({limit}); raise [state_store] "
                       "max_value_storage_bytes or set it to 0 to disable the limit")
    if problem is not None:
        raise Unprocessable([issue("value_error", ("body", "value"), problem, value)])
    return value


def _expires_at(call: Call, body: dict[str, Any]) -> dt.datetime | None:
    raw = body.get("expires_at", "default")
    if raw == "default":
        return default_expiry(call.now())
    if raw is None:
        return None
    parsed = parse_datetime(raw) if isinstance(raw, str) else None
    if parsed is None or parsed.tzinfo is None:
        raise Unprocessable([issue("datetime_type", ("body", "expires_at"),
                                   "Input should be 'default', null or a datetime with a time zone", raw)])
    return parsed


def _task_entry(entry: StateEntry) -> TaskStateStoreResponse:
    return {"key": entry.key, "value": entry.value, "updated_at": iso(entry.updated_at),
            "expires_at": iso(entry.expires_at)}


def _asset_entry(entry: StateEntry) -> AssetStateStoreResponse:
    by = entry.last_updated_by
    return {"key": entry.key, "value": entry.value, "updated_at": iso(entry.updated_at),
            "last_updated_by": None if by is None else {
                "kind": by["kind"], "dag_id": by.get("dag_id"), "run_id": by.get("run_id"),
                "task_id": by.get("task_id"), "map_index": by.get("map_index")}}


def _page(call: Call, entries: list[StateEntry]) -> tuple[list[StateEntry], int]:
    limit = min(call.query.integer("limit", 50, ge=0), 100)
    offset = call.query.integer("offset", 0, ge=0)
    call.query.check()
    return entries[offset:offset + limit], len(entries)


# -- task state ---------------------------------------------------------------------------------------------------
@routes.get(TASK)
def list_task_state_store(call: Call) -> TaskStateStoreCollectionResponse:
    key = _scope(call)
    entries, total = _page(call, call.store.list_task_state(key, now=call.now()))
    return {"task_state_store": [_task_entry(e) for e in entries], "total_entries": total}


@routes.get(TASK + "/{key}")
def get_task_state_store(call: Call) -> TaskStateStoreResponse:
    scope = _scope(call)
    call.query.check()
    entry = call.store.get_task_state(scope, call.path("key"), now=call.now())
    if entry is None:
        raise NotFound(f"Task state store key {call.path('key')!r} not found")
    return _task_entry(entry)


@routes.put(TASK + "/{key}", status=204)
def set_task_state_store(call: Call) -> Reply:
    scope = _scope(call)
    call.query.check()
    body = parse_body(call.request.body, {**VALUE, "expires_at": Field("json")})
    value, expires_at = _value(body), _expires_at(call, body)
    _require_instance(call, scope)
    call.store.set_task_state(scope, call.path("key"), value, expires_at=expires_at, now=call.now())
    return Reply(204)


@routes.patch(TASK + "/{key}")
def patch_task_state_store(call: Call) -> None:
    """Only the value changes; the key keeps its expiry (Airflow answers 200 with no content)."""
    scope = _scope(call)
    call.query.check()
    value = _value(parse_body(call.request.body, VALUE))
    _require_instance(call, scope)
    entry = call.store.get_task_state(scope, call.path("key"), now=call.now())
    if entry is None:
        raise NotFound(f"Task state store key {call.path('key')!r} not found")
    call.store.set_task_state(scope, call.path("key"), value, expires_at=entry.expires_at, now=call.now())


@routes.delete(TASK + "/{key}")
def delete_task_state_store(call: Call) -> Reply:
    scope = _scope(call)
    call.query.check()
    _require_instance(call, scope)
    call.store.delete_task_state(scope, call.path("key"))
    return Reply(204)


@routes.delete(TASK)
def clear_task_state_store(call: Call) -> Reply:
    """Every key of the task instance, or of every map index of the task with ``all_map_indices``."""
    scope = _scope(call)
    every_index = bool(call.query.boolean("all_map_indices", False))
    call.query.check()
    for key in _require_instance(call, scope, any_index=every_index):
        call.store.clear_task_state(key)
    return Reply(204)


# -- asset state --------------------------------------------------------------------------------------------------
def _asset_name(call: Call) -> str:
    asset_id = call.int_path("asset_id")
    asset = call.store.get_asset(asset_id)
    if asset is None:
        raise NotFound(f"Asset with id {asset_id!r} not found")
    name: str = asset.name
    return name


@routes.get(ASSET)
def list_asset_state_store(call: Call) -> AssetStateStoreCollectionResponse:
    name = _asset_name(call)
    entries, total = _page(call, call.store.list_asset_state(name))
    return {"asset_state_store": [_asset_entry(e) for e in entries], "total_entries": total}


@routes.get(ASSET + "/{key}")
def get_asset_state_store(call: Call) -> AssetStateStoreResponse:
    entry = call.store.get_asset_state(_asset_name(call), call.path("key"))
    if entry is None:
        raise NotFound(f"Asset state store key {call.path('key')!r} not found")
    return _asset_entry(entry)


@routes.put(ASSET + "/{key}", status=204)
def set_asset_state_store(call: Call) -> Reply:
    name = _asset_name(call)
    value = _value(parse_body(call.request.body, VALUE))
    call.store.set_asset_state(name, call.path("key"), value, now=call.now(), writer=None)
    return Reply(204)


@routes.delete(ASSET + "/{key}")
def delete_asset_state_store(call: Call) -> Reply:
    call.store.delete_asset_state(_asset_name(call), call.path("key"))
    return Reply(204)


@routes.delete(ASSET)
def clear_asset_state_store(call: Call) -> Reply:
    call.store.clear_asset_state(_asset_name(call))
    return Reply(204)
