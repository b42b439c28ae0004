"""A limit's shape: created (``ensure``), resized, rebalanced, and its room read. Each write is one transaction
of a few counter items that moves room and keeps ``free = share - held`` on every shard (PROTOCOL.md,
invariant 1); none touches a holder.
"""

from __future__ import annotations

from collections.abc import Mapping

from updraft.limits import counters
from updraft.limits.shards import UNLIMITED, counted_size, resize_plan, shard_count, split
from updraft.limits.shards import room as free_room
from updraft.limits.table import Contended, Table

# Re-reads a resize makes when its transaction met a concurrent change of the shares it read.
ROUNDS = 8


def ensure(table: Table, limit_id: str, size: int) -> bool:
    """Create the limit at ``size`` slots (< 0: unlimited), every slot free, its root and every shard in one
    transaction: True if this call created it, False if it existed (whatever its size: changing that is
    ``resize``'s)."""
    size = counted_size(size)
    shares = split(size, shard_count(size))
    items = [counters.create(table, limit_id, 0, shares[0], root=(size, len(shares)))]
    items += [counters.create(table, limit_id, shard, share) for shard, share in enumerate(shares) if shard]
    return table.transact(items).landed


def resize(table: Table, limit_id: str, size: int) -> bool:
    """Make the limit ``size`` slots (< 0: unlimited): True once it has that size, False when it does not exist
    (the acquire that first needs it creates it with its need's size). A shrink below the slots held leaves
    shards over their share: their holders finish and no take lands there until releases bring them back
    (``shards.resize_plan`` cuts free slots first, so a shard goes over only when the limit does)."""
    for _ in range(ROUNDS):
        limit = counters.read(table, limit_id)
        if limit is None:
            return False
        if limit.size == counted_size(size):
            return True
        deltas = resize_plan(limit.shares, limit.frees, size)
        items = [counters.reshare(table, limit_id, 0, deltas[0], (limit.shares[0], limit.frees[0]),
                                  root=(limit.size, counted_size(size), len(deltas)))]
        items += [counters.reshare(table, limit_id, shard, deltas[shard], (limit.shares[shard], limit.frees[shard]))
                  for shard in range(1, len(limit.shares)) if deltas[shard]]
        items += [counters.create(table, limit_id, shard, deltas[shard])
                  for shard in range(len(limit.shares), len(deltas))]
        if table.transact(items).landed:
            return True
    raise Contended(f"limit {limit_id!r} changed under {ROUNDS} resizes")


def rebalance(table: Table, limit_id: str, plan: Mapping[int, int]) -> bool:
    """Move free slots between the limit's shards as ``plan`` says (``shards.rebalance_plan``: shard -> delta,
    summing to 0), each donor only if it still has them free: True if it landed, False if a donor had less by
    then (nothing moved; read again)."""
    if sum(plan.values()) != 0:
        raise ValueError(f"a rebalance moves slots, it does not make them: {dict(plan)}")
    return table.transact([counters.move(table, limit_id, shard, delta)
                           for shard, delta in sorted(plan.items()) if delta]).landed


def room(table: Table, limit_id: str) -> int | None:
    """How many slots of the limit can be taken now (a shard over its share offers none), from a strongly
    consistent read of its shards; None when the limit does not exist yet."""
    limit = counters.read(table, limit_id)
    return None if limit is None else free_room(limit.frees)


def held(table: Table, limit_id: str) -> int:
    """How many slots tickets hold of the limit now (its size less its shards' free slots), from a strongly
    consistent read; 0 when it does not exist yet. A run limit's holders are counted so (``max_active_runs``)."""
    limit = counters.read(table, limit_id)
    return 0 if limit is None else limit.size - sum(limit.frees)


def size(table: Table, limit_id: str) -> int | None:
    """The limit's size (-1: unlimited), from a strongly consistent read; None when it does not exist yet. A
    claimer whose limit is full compares it with the size it means (a pool's slots, a DAG's max_active_tasks,
    parallelism, as configured now) and resizes when they differ."""
    limit = counters.read(table, limit_id)
    return None if limit is None else -1 if limit.size == UNLIMITED else limit.size
