"""Pools: list, get, create (``POST``), update (``PATCH``) and delete, as Airflow's ``PoolResponse``.

The slot counts come from the pool limit's holders (``scheduling.pool_occupancy``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from updraft.api.body import Field, parse_body
from updraft.api.errors import BadRequest, Conflict, NotFound
from updraft.api.formats import pattern_matcher
from updraft.api.pagination import page_of, paginate
from updraft.api.routing import Call, Reply, RouteTable
from updraft.limits import resize
from updraft.model.limits import DEFAULT_POOL, pool_limit
from updraft.scheduling import limits_table, pools_occupancy

if TYPE_CHECKING:
    from updraft.api.models import PoolCollectionResponse, PoolResponse

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


def pool_response(call: Call, pool: Any) -> PoolResponse:
    slots = pools_occupancy(call.store, pool)
    return {
        "name": pool.name, "slots": pool.slots, "description": pool.description or None,
        "include_deferred": pool.include_deferred, "occupied_slots": slots["occupied"],
        "running_slots": slots["running"], "queued_slots": slots["queued"], "scheduled_slots": slots["scheduled"],
        "deferred_slots": slots["deferred"], "open_slots": slots["open"], "team_name": None,
    }


def _unsupported(body: dict[str, Any]) -> None:
    if body.get("team_name") is not None:
        raise BadRequest("Updraft has no multi-team mode: team_name must be null")


@routes.get("/pools")
def get_pools(call: Call) -> PoolCollectionResponse:
    page = page_of(call.query, ["id"])
    matches = pattern_matcher(call.query.string("pool_name_pattern"))
    call.query.check()
    pools, total = paginate([p for p in call.store.list_pools() if matches(p.name)], page, POOL_ORDER)
    return {"pools": [pool_response(call, p) for p in pools], "total_entries": total}


@routes.get("/pools/{pool_name}")
def get_pool(call: Call) -> PoolResponse:
    name = call.path("pool_name")
    pool = call.store.get_pool(name)
    if pool is None:
        raise _not_found(name)
    return pool_response(call, pool)


@routes.post("/pools", status=201)
def post_pool(call: Call) -> PoolResponse:
    body = parse_body(call.request.body, POST_BODY)
    _unsupported(body)
    name = body["name"]
    if not name:
        raise BadRequest("A pool needs a name")
    if call.store.get_pool(name) is not None:
        raise Conflict(f"Pool with name: `{name}` already exists")
    pool = call.store.set_pool(name, body["slots"], body.get("description") or "", bool(body.get("include_deferred")))
    resize(limits_table(call.store), pool_limit(name), pool.slots)  # a pool deleted and created again
    return pool_response(call, pool)


@routes.patch("/pools/{pool_name}")
def patch_pool(call: Call) -> PoolResponse:
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
        # Its counters follow at once (a claim finding the pool full would resize them too, but a shrink must
        # stop admissions before then); not created yet, the first claim creates them at this size.
        resize(limits_table(call.store), pool_limit(name), pool.slots)
    return pool_response(call, pool)


@routes.delete("/pools/{pool_name}")
def delete_pool(call: Call) -> Reply:
    name = call.path("pool_name")
    if name == DEFAULT_POOL:
        raise BadRequest("Default Pool can't be deleted")
    if not call.store.delete_pool(name):
        raise _not_found(name)
    return Reply(204)
