"""The shard arithmetic of a limit, pure: how many shards for a size, how a size splits over them, which shard a
take tries first, and the plans of a rebalance and of a resize.

A limit of ``size`` slots is split into shards, each a sub-limit of its own ``share``: ``free = share - held``
on every shard, and the shares sum to ``size``. A take lands on one shard (``free >= n``), so the held slots of a
shard never pass its share, and the held slots of the limit never pass its size (a shrink below what is held
leaves some ``free`` negative: those holders finish and no take lands there until releases bring it back).
Shards exist for throughput only (an item is ~100 bytes whatever its holders): one partition takes ~1,000 WCU/s
and a transactional write is 2 WCU, so a busy limit needs several.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

# Slots per shard before a limit takes another shard, and the most shards a limit has: a pool of 2,048 slots or
# more has 32, enough for ~16,000 takes and gives per second.
SLOTS_PER_SHARD = 64
MAX_SHARDS = 32
# The size an unlimited limit (a pool of -1 slots) is counted with: counting it anyway means a later finite size
# still sees the slots held meanwhile.
UNLIMITED = 2**31 - 1


def counted_size(size: int) -> int:
    """The size a limit is counted with: ``size``, or ``UNLIMITED`` for a negative (unlimited) one."""
    return UNLIMITED if size < 0 else size


def shard_count(size: int) -> int:
    """The shards a limit of ``size`` slots is created with: one per ``SLOTS_PER_SHARD``, 1 to ``MAX_SHARDS``."""
    return max(1, min(MAX_SHARDS, -(-counted_size(size) // SLOTS_PER_SHARD)))


def split(size: int, shards: int) -> list[int]:
    """``size`` split into ``shards`` shares as even as can be, the remainder on the first shards."""
    if size < 0 or shards < 1:
        raise ValueError(f"cannot split {size} slots into {shards} shards")
    base, extra = divmod(size, shards)
    return [base + (index < extra) for index in range(shards)]


def first_shard(shards: int, token: str) -> int:
    """The shard a take tries first: spread by a stable hash of ``token`` (a ticket id and the limit's), so
    concurrent takes of one busy limit spread over its shards."""
    return spread(shards, token)


def spread(choices: int, token: str) -> int:
    """One of ``choices`` (0 to choices - 1), by a stable hash of ``token``."""
    return zlib.crc32(token.encode()) % choices


def room(frees: Sequence[int]) -> int:
    """What can be taken from a limit whose shards have ``frees``: a shard over its share offers nothing."""
    return sum(max(0, free) for free in frees)


def pick_shard(frees: Sequence[int], slots: int) -> int | None:
    """The shard with the most free, if it has ``slots``; None when no single shard has them."""
    best = max(range(len(frees)), key=lambda index: (frees[index], -index))
    return best if frees[best] >= slots else None


def rebalance_plan(frees: Sequence[int], slots: int) -> dict[int, int] | None:
    """Room moved so one shard has ``slots`` free: ``{shard: delta}`` (a donor's negative, the target's positive,
    summing to 0), taken from the richest shards first into the richest; None when the limit has no such room
    (or one shard has it already: nothing to move)."""
    target = max(range(len(frees)), key=lambda index: (frees[index], -index))
    if frees[target] >= slots or room(frees) < slots:
        return None
    missing = slots - max(0, frees[target])
    plan: dict[int, int] = {}
    for donor in sorted((i for i in range(len(frees)) if i != target and frees[i] > 0), key=lambda i: -frees[i]):
        moved = min(frees[donor], missing)
        plan[donor] = -moved
        missing -= moved
        if not missing:
            break
    plan[target] = -sum(plan.values())
    return plan


def resize_plan(shares: Sequence[int], frees: Sequence[int], size: int) -> list[int]:
    """How a limit with ``shares`` and ``frees`` becomes ``size`` slots: a delta of share (and free) per shard,
    for more shards when ``size`` needs more (a limit never loses shards). A growth fills the smallest shares
    toward an even split; a shrink takes free slots first (richest shard first), and only what it cannot take free
    from shares still held (largest first). Then free slots cover the shards over their share, so the limit
    offers room only when it is under its size, and then exactly ``size - held`` (no shard over its share).
    Every share stays >= 0."""
    size = counted_size(size)
    count = max(len(shares), shard_count(size))
    old = [*shares, *[0] * (count - len(shares))]
    free = [*frees, *[0] * (count - len(frees))]
    deltas = [0] * count
    remaining = size - sum(old)
    if remaining >= 0:
        target = split(size, count)
        for shard in sorted(range(count), key=lambda i: old[i] - target[i]):
            deltas[shard] = min(remaining, max(0, target[shard] - old[shard]))
            remaining -= deltas[shard]
    else:
        remaining = -remaining
        for shard in sorted(range(count), key=lambda i: -free[i]):
            deltas[shard] = -min(remaining, max(0, free[shard]))
            remaining += deltas[shard]
        for shard in sorted(range(count), key=lambda i: -(old[i] + deltas[i])):
            cut = min(remaining, old[shard] + deltas[shard])
            deltas[shard] -= cut
            remaining -= cut
    over = [shard for shard in range(count) if free[shard] + deltas[shard] < 0]
    for shard in over:
        for donor in range(count):
            moved = min(-(free[shard] + deltas[shard]), max(0, free[donor] + deltas[donor]))
            deltas[donor] -= moved
            deltas[shard] += moved
    return deltas
