"""Pools: list, get, create (``POST``), update (``PATCH``) and delete, as Airflow's ``PoolResponse``.

A pool is a limit item whose holders are the tries holding its slots (from claim to end), so the slot counts
come from the holders: ``occupied`` is every held slot; ``running`` and ``queued`` split them by the holding
try's state (a read per holding try, at most the pool's size); ``open`` is what is left (-1: unlimited).
A deferred try gives its slot back unless its pool has ``include_deferred`` (Airflow's: deferred tasks count
against the pool); then ``deferred`` counts it, and ``scheduled`` while its resumed try waits to be claimed again.
"""

from __future__ import annotations

from typing import Any

from updraft.api.body import Field, parse_body
from updraft.api.errors import BadRequest, Conflict, NotFound
from updraft.api.formats import pattern_matcher
from updraft.api.pagination import page_of, paginate
from updraft.api.routing import Call, Reply, RouteTable
from updraft.model.limits import DEFAULT_POOL, pool_limit
from updraft.model.states import TaskInstanceState
from updraft.scheduling.slot_holders import EntryHolders

routes = RouteTable()

MAX_SLOTS = 2**31 - 1  # Airflow's column is an INTEGER
MAX_DESCRIPTION = 64 * 1024  # a pool is one DynamoDB item (at most 400 KB with its holders)
POST_BODY = {"name": Field("str", required=True, nullable=False, max_length=256, key=True),
             "slots": Field("int", required=True, nullable=False, minimum=-1, maximum=MAX_SLOTS),
             "description": Field("str", max_length=MAX_DESCRIPTION), "include_deferred": Field("bool"),
             "team_name": Field("str")}
PATCH_BODY = {"pool": Field("str"), "slots": Field("int", minimum=-1, maximum=MAX_SLOTS),
              "description": Field("str", max_length=MAX_DESCRIPTION), "include_deferred": Field("bool"),
              "team_name": Field("str")}
POOL_ORDER = {"id": lambda p: (p.name != DEFAULT_POOL, p.name), "name": lambda p: p.name,
              "pool": lambda p: p.name, "slots": lambda p: p.slots}


def _not_found(name: str) -> NotFound:
    return NotFound(f"The Pool with name: `{name}` was not found")


def pool_response(call: Call, pool: Any) -> dict[str, Any]:
    limit = call.store.get_limit(pool_limit(pool.name))
    holders = limit.holders if limit is not None else {}
    running = deferred = scheduled = 0
    tries = EntryHolders(call.store)
    for entry, slots in holders.items():
        ti = tries.holder(pool_limit(pool.name), entry)  # the try it names, or the one it was handed on to
        if ti is not None and ti.state == TaskInstanceState.RUNNING:
            running += slots
        elif ti is not None and ti.state == TaskInstanceState.DEFERRED:
            deferred += slots
        elif ti is not None and ti.state == TaskInstanceState.SCHEDULED:  # resumed, its kept slot still held
            scheduled += slots
    occupied = sum(holders.values())
    return {
        "name": pool.name, "slots": pool.slots, "description": pool.description or None,
        "include_deferred": pool.include_deferred, "occupied_slots": occupied, "running_slots": running,
        "queued_slots": occupied - running - deferred - scheduled, "scheduled_slots": scheduled,
        "deferred_slots": deferred,
        "open_slots": -1 if pool.slots < 0 else max(pool.slots - occupied, 0), "team_name": None,
    }


def _unsupported(body: dict[str, Any]) -> None:
    if body.get("team_name") is not None:
        raise BadRequest("Updraft has no multi-team mode: team_name must be null")


@routes.get("/pools")
def get_pools(call: Call) -> dict[str, Any]:
    page = page_of(call.query, ["id"])
    matches = pattern_matcher(call.query.string("pool_name_pattern"))
    call.query.check()
    pools, total = paginate([p for p in call.store.list_pools() if matches(p.name)], page, POOL_ORDER)
    return {"pools": [pool_response(call, p) for p in pools], "total_entries": total}


@routes.get("/pools/{pool_name}")
def get_pool(call: Call) -> dict[str, Any]:
    name = call.path("pool_name")
    pool = call.store.get_pool(name)
    if pool is None:
        raise _not_found(name)
    return pool_response(call, pool)


@routes.post("/pools", status=201)
def post_pool(call: Call) -> dict[str, Any]:
    body = parse_body(call.request.body, POST_BODY)
    _unsupported(body)
    name = body["name"]
    if not name:
        raise BadRequest("A pool needs a name")
    if call.store.get_pool(name) is not None:
        raise Conflict(f"Pool with name: `{name}` already exists")
    return pool_response(call, call.store.set_pool(name, body["slots"], body.get("description") or "",
                                                    bool(body.get("include_deferred"))))


@routes.patch("/pools/{pool_name}")
def patch_pool(call: Call) -> dict[str, Any]:
    """Only the fields sent (or named in ``update_mask``) change; a pool cannot be renamed (its slots are held
    under its name), and ``default_pool`` keeps its name as in Airflow."""
    name = call.path("pool_name")
    mask = set(call.query.strings("update_mask"))
    call.query.check()
    body = parse_body(call.request.body, PATCH_BODY)
    _unsupported(body)
    if mask:
        body = {k: v for k, v in body.items() if k in mask}
    if body.get("pool") not in (None, name):
        raise BadRequest("Only slots and description can be modified on Default Pool" if name == DEFAULT_POOL
                         else "Updraft cannot rename a pool: create one with the new name instead")
    pool = call.store.get_pool(name)
    if pool is None:
        raise _not_found(name)
    if body.get("slots") is not None or "description" in body or body.get("include_deferred") is not None:
        slots = body["slots"] if body.get("slots") is not None else pool.slots
        description = body["description"] or "" if "description" in body else pool.description
        pool = call.store.set_pool(name, slots, description, body.get("include_deferred"))
    return pool_response(call, pool)


@routes.delete("/pools/{pool_name}")
def delete_pool(call: Call) -> Reply:
    name = call.path("pool_name")
    if name == DEFAULT_POOL:
        raise BadRequest("Default Pool can't be deleted")
    if not call.store.delete_pool(name):
        raise _not_found(name)
    return Reply(204)
