"""A limit's counter items: their shape, their writes (as ``TransactWriteItems`` elements), and their read.

Shard ``n`` of a limit is the item ``keys.counter_key(limit_id, n)`` with ``share`` (its part of the size) and
``free`` (``share`` minus the slots tickets hold on it). Shard 0, the root, also has ``size`` (the sum of the
shares) and ``shards`` (how many exist). Every write here is relative (``free = free - :n``) or conditioned on
what it replaces, so writes of different holders compose in any order, and each keeps
``free = share - held`` on its shard (PROTOCOL.md, invariant 1).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from updraft.limits.table import Table
from updraft.store import keys

FREE, SHARE, SIZE, SHARDS = "free", "share", "size", "shards"
_NAMES = {f"#{name}": name for name in (FREE, SHARE, SIZE, SHARDS)}  # ``size`` is a DynamoDB reserved word


@dataclass(frozen=True)
class Limit:
    """A limit as read: its ``size`` and each shard's ``shares`` and ``frees`` (index = shard)."""

    size: int
    shares: tuple[int, ...]
    frees: tuple[int, ...]


def _update(table: Table, limit_id: str, shard: int, expression: str, condition: str,
            values: Mapping[str, int], *, report: bool = False) -> dict[str, Any]:
    text = expression + " " + condition
    update: dict[str, Any] = {
        "TableName": table.name, "Key": keys.counter_key(limit_id, shard), "UpdateExpression": expression,
        "ConditionExpression": condition,
        "ExpressionAttributeNames": {alias: name for alias, name in _NAMES.items() if alias in text}}
    if values:
        update["ExpressionAttributeValues"] = {alias: {"N": str(value)} for alias, value in values.items()}
    if report:  # a refused take reads the shard as it was in its cancellation reason, without a read
        update["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
    return {"Update": update}


def take(table: Table, limit_id: str, shard: int, slots: int) -> dict[str, Any]:
    """``slots`` taken from the shard, only if it has them free."""
    return _update(table, limit_id, shard, "SET #free = #free - :n", "#free >= :n", {":n": slots}, report=True)


def give(table: Table, limit_id: str, shard: int, slots: int) -> dict[str, Any]:
    """``slots`` given back to the shard (refused only when the limit's counters no longer exist)."""
    return _update(table, limit_id, shard, "SET #free = #free + :n", "attribute_exists(#free)", {":n": slots})


def create(table: Table, limit_id: str, shard: int, share: int, root: tuple[int, int] | None = None,
           ) -> dict[str, Any]:
    """The shard created with ``share`` slots, all free (``root``: shard 0, with the limit's size and shard
    count); refused if it exists."""
    expression = "SET #free = :s, #share = :s" + (", #size = :z, #shards = :c" if root else "")
    values = {":s": share} | ({":z": root[0], ":c": root[1]} if root else {})
    return _update(table, limit_id, shard, expression, "attribute_not_exists(#free)", values)


def move(table: Table, limit_id: str, shard: int, delta: int) -> dict[str, Any]:
    """A rebalance's part on one shard: ``delta`` slots of share and free moved in (out, when negative: only if
    they are free, so no holder's slot moves)."""
    condition = "#free >= :m" if delta < 0 else "attribute_exists(#free)"
    values = {":d": delta} | ({":m": -delta} if delta < 0 else {})
    return _update(table, limit_id, shard, "SET #free = #free + :d, #share = #share + :d", condition, values)


def reshare(table: Table, limit_id: str, shard: int, delta: int, was: tuple[int, int],
            root: tuple[int, int, int] | None = None) -> dict[str, Any]:
    """A resize's part on one existing shard: ``delta`` slots of share and free, only if its (share, free) are
    still ``was`` as read: the share unchanged (no rebalance or resize meanwhile) and, for a cut, the free not
    lower (a take meanwhile would make the cut reach held slots the plan left alone). ``root``: shard 0, with
    (the size it had, the new size, the shard count), only if the size is still the one it had."""
    expression = "SET #free = #free + :d, #share = #share + :d" + (", #size = :z, #shards = :c" if root else "")
    condition = "#share = :w" + (" AND #free >= :f" if delta < 0 else "") + (" AND #size = :y" if root else "")
    values = {":d": delta, ":w": was[0]} | ({":f": was[1]} if delta < 0 else {})
    if root:
        values |= {":y": root[0], ":z": root[1], ":c": root[2]}
    return _update(table, limit_id, shard, expression, condition, values)


def number(item: Mapping[str, Any], name: str) -> int | None:
    """A counter attribute of an item as DynamoDB returns it (None: absent)."""
    value = item.get(name)
    return None if value is None else int(value["N"])


def read(table: Table, limit_id: str) -> Limit | None:
    """The limit's shards, strongly consistent (None: not created): one GetItem of the root, and one BatchGetItem
    of the other shards when it has more."""
    root = table.client.get_item(TableName=table.name, Key=keys.counter_key(limit_id, 0),  # type: ignore[arg-type]
                                 ConsistentRead=True).get("Item")
    if root is None:
        return None
    size, shards = number(root, SIZE), number(root, SHARDS)
    if size is None or shards is None:
        raise ValueError(f"limit {limit_id!r}'s root counter has no size or shard count: {root}")
    found: dict[int, Mapping[str, Any]] = {0: root}
    wanted = [keys.counter_key(limit_id, shard) for shard in range(1, shards)]
    shard_of = {key["pk"]["S"]: shard for shard, key in enumerate(wanted, start=1)}
    while wanted:
        batch, wanted = wanted[:100], wanted[100:]
        request: Any = {table.name: {"Keys": batch, "ConsistentRead": True}}
        while request:
            response = table.client.batch_get_item(RequestItems=request)
            for item in response.get("Responses", {}).get(table.name, []):
                found[shard_of[item["pk"]["S"]]] = item
            request = response.get("UnprocessedKeys") or None
    if len(found) != shards:
        raise ValueError(f"limit {limit_id!r} has {shards} shards but {len(found)} counters")
    counters = [found[shard] for shard in range(shards)]
    return Limit(size, tuple(number(c, SHARE) or 0 for c in counters), tuple(number(c, FREE) or 0 for c in counters))
