"""How a limit is laid out over shard items, as pure functions: each shard's share of the size, where a take
goes, and the compact holder entries, so that no limit item can pass 1 KB however many holders there are.

A limit of N slots has ``ceil(N / SHARD_SLOTS)`` active shards; each shard is one item with its own ``cap`` and
``available`` and at most ``SHARD_ENTRIES`` holder entries. A holder's entry is keyed by a 12-character digest of
its name and keeps ``[slots, taken at (epoch ms), write token, name]``; a name longer than ``NAME_INLINE_MAX``
bytes is kept in a name item of its own instead (Airflow's ids allow 250-character dag, run and task ids).
An unlimited limit (-1) admits by entry count only and adds shards when every one is full.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

SHARD_SLOTS = 4  # C: the slots of one shard (a pool of 1,000 spreads over 250 items)
SHARD_ENTRIES = 4  # holder entries one shard may carry (also bounds 0-slot holders and unlimited shards)
NAME_INLINE_MAX = 160  # bytes of a holder name kept in its entry; longer ones go to a name item
TOKEN_CHARS = 8  # the write token's prefix an entry keeps (a lost acknowledgement is told by it)
PIECE = "+"  # suffix of an entry that is one piece of a take spread over several shards


@dataclass(frozen=True)
class Entry:
    """One holder entry of one shard, as read."""

    key: str  # the holder key, without the piece suffix
    slots: int
    taken_at: dt.datetime
    token: str
    name: str  # "" when the name is in a name item


def plan_caps(limit: int, held: Sequence[int], entry_counts: Sequence[int]) -> list[int]:
    """Every shard's cap for a limit of ``limit`` slots, given what each shard holds (and how many entries), so
    that no shard offers room the limit does not have: the caps add up to the size when it is above what is
    held, each shard getting its held slots plus up to ``SHARD_SLOTS`` of the room (shards with no entry left get
    none; what is left goes to new shards, appended). A size at or below what is held parks every cap at 0, so no
    release anywhere admits anyone until the held slots fall below the size (then a take rebalances). An unlimited
    limit keeps -1 everywhere and gains a shard when every shard has its entries."""
    if limit < 0:
        full = bool(entry_counts) and all(n >= SHARD_ENTRIES for n in entry_counts)
        return [-1] * (len(held) + (1 if full else 0))
    room = limit - sum(held)
    if room <= 0:
        return [0] * len(held)
    caps = []
    for slots, count in zip(held, entry_counts, strict=True):
        share = min(max(SHARD_SLOTS - slots, 0), room) if count < SHARD_ENTRIES else 0
        caps.append(slots + share)
        room -= share
    while room > 0:
        caps.append(min(SHARD_SLOTS, room))
        room -= caps[-1]
    return caps


def root_cap(limit: int) -> int:
    """A new limit's root offers up to one shard's share (-1 when unlimited); more shards come with the need."""
    return -1 if limit < 0 else min(limit, SHARD_SLOTS)


def root_admits(cap: int, slots: int) -> bool:
    """Whether a new root of ``cap`` can be created holding a take of ``slots`` (its first take, in its creation)."""
    return cap < 0 or slots <= cap


def effective(cap: int) -> int:
    """What a cap contributes to ``available``: an unlimited shard counts its held slots down from 0."""
    return max(cap, 0)


def active_shards(caps: Sequence[int]) -> int:
    """The shards takes are placed on: up to the last one with a share of the size (every shard when unlimited)."""
    offering = [i for i, cap in enumerate(caps) if cap != 0]
    return offering[-1] + 1 if offering else 1


def inline_name(holder: str) -> bool:
    return len(holder.encode()) <= NAME_INLINE_MAX


def entry_value(slots: int, now: dt.datetime, token: str, holder: str) -> list[Any]:
    return [slots, int(now.timestamp() * 1000), token[:TOKEN_CHARS], holder if inline_name(holder) else ""]


def entries(holders: Mapping[str, Any] | None) -> list[Entry]:
    """A shard's holders map as read (numbers may come back as floats or Decimals)."""
    found = []
    for key, value in (holders or {}).items():
        slots, at_ms, token, name = value
        found.append(Entry(key.removesuffix(PIECE), int(slots),
                           dt.datetime.fromtimestamp(int(at_ms) / 1000, tz=dt.UTC), str(token), str(name)))
    return found


@dataclass(frozen=True)
class ShardView:
    """What a take needs of one shard: its room in slots and in entries, and whether the holder is in it."""

    index: int
    cap: int
    available: int
    entry_count: int


def plan_take(shards: Sequence[ShardView], slots: int, order: Sequence[int]) -> list[tuple[int, int]] | None:
    """Where a take of ``slots`` goes: one shard with room when there is one (tried in ``order``), else pieces
    over several shards (largest room first), each shard keeping room for one more entry. None: not enough room.
    Unlimited shards (cap < 0) take any number of slots while they have room for an entry."""
    by_index = {s.index: s for s in shards}
    open_shards = [by_index[i] for i in order if i in by_index and by_index[i].entry_count < SHARD_ENTRIES]
    for shard in open_shards:
        if shard.cap < 0 or shard.available >= slots:
            return [(shard.index, slots)]
    if slots == 0:
        return None
    pieces: list[tuple[int, int]] = []
    left = slots
    for shard in sorted((s for s in open_shards if s.cap >= 0 and s.available > 0), key=lambda s: -s.available):
        piece = min(shard.available, left)
        pieces.append((shard.index, piece))
        left -= piece
        if left == 0:
            return pieces
    return None


def probe_order(home: int, count: int) -> list[int]:
    """Shards in the order a holder tries them: its home first, then onward, wrapping."""
    return [(home + step) % count for step in range(count)]
