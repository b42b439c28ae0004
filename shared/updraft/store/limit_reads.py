"""The reads of a limit (``store/limits.py``): its root and shards by index, the holders' full names, and what a
process remembers of a limit's shape (its shard counts) to place a take without reading it."""

from __future__ import annotations

import datetime as dt
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from updraft.store import keys
from updraft.store.base import StoreBase
from updraft.store.limit_api import LimitState
from updraft.store.limit_shards import SHARD_ENTRIES, entries
from updraft.store.models import LimitItem

# How long a process trusts the shard count it last read: a take refused by a one-shard limit read this recently
# is refused without a read (a resize that grew it is seen at the latest this much later).
SHAPE_TTL_S = 10.0
# How long a process steers takes by the room it last saw in a sharded limit's shards (``_Rooms``).
ROOMS_TTL_S = 5.0


@dataclass(frozen=True)
class _Shape:
    """What a process remembers of a limit to place a take without reading it."""

    limit: int
    active: int
    extent: int
    read_at: float
    whole: bool  # one shard offering the whole size: its refusal is the limit's (full, or the holder holds)

    @property
    def fresh(self) -> bool:
        return time.monotonic() - self.read_at < SHAPE_TTL_S


@dataclass
class _Rooms:
    """The shards of a sharded limit that had room when this process last saw them (the last read of every
    shard, then every take's written or refused shard coming back with its write): a take near full goes where
    room was seen instead of probing full shards one by one and reading the limit again. Only a guide: each
    take is still a conditional write, and a refusal corrects the view."""

    read_at: float
    room: dict[int, int]  # shard index -> free slots (a large number for an unlimited shard)

    @property
    def fresh(self) -> bool:
        return time.monotonic() - self.read_at < ROOMS_TTL_S


def shard_room(shard: LimitItem) -> int:
    """The slots a take could get in ``shard``: none without room for one more entry."""
    if len(raw_holders(shard)) >= SHARD_ENTRIES:
        return 0
    cap = int(shard.cap if shard.cap is not None else 0)
    return 1 << 30 if cap < 0 else max(int(shard.available or 0), 0)


def raw_holders(item: LimitItem) -> dict[str, Any]:
    """The holders map as read (a MapAttribute: its as_dict is unannotated in pynamodb), or as built."""
    holders = item.holders
    raw: dict[str, Any] = (holders.as_dict() if hasattr(holders, "as_dict")  # type: ignore[no-untyped-call]
                           else dict(holders or {}))
    return raw


class LimitReads(StoreBase):
    def _shape(self, limit_id: str) -> _Shape | None:
        shape: _Shape | None = self._limit_shapes.get(limit_id)
        return shape

    def _remember(self, limit_id: str, root: LimitItem) -> _Shape:
        limit, extent = int(root.limit or 0), int(root.extent or 1)
        shape = _Shape(limit, int(root.active or 1), extent, time.monotonic(),
                       whole=limit >= 0 and extent == 1 and int(root.cap or 0) == limit)
        with self._lock:
            self._limit_shapes[limit_id] = shape
        return shape

    def _rooms(self, limit_id: str) -> dict[int, int] | None:
        """The shards with room, as last seen, when seen recently (None: not seen recently)."""
        rooms: _Rooms | None = self._limit_rooms.get(limit_id)
        return dict(rooms.room) if rooms is not None and rooms.fresh else None

    def _see_rooms(self, limit_id: str, shards: list[LimitItem]) -> None:
        room = {i: free for i, shard in enumerate(shards) if (free := shard_room(shard)) > 0}
        with self._lock:
            self._limit_rooms[limit_id] = _Rooms(time.monotonic(), room)

    def _see_room(self, limit_id: str, index: int, shard: LimitItem | None) -> None:
        """One shard as a write left or found it."""
        with self._lock:
            rooms: _Rooms | None = self._limit_rooms.get(limit_id)
            if rooms is None or shard is None:
                return
            free = shard_room(shard)
            if free > 0:
                rooms.room[index] = free
            else:
                rooms.room.pop(index, None)

    def _get(self, pk: str, sk: str) -> LimitItem | None:
        L = self.models.limit
        try:
            return L.get(pk, sk, consistent_read=True)
        except L.DoesNotExist:
            return None

    def _read(self, limit_id: str) -> list[LimitItem]:
        """Every shard of the limit, root first, by index (a missing shard is an empty stand-in); [] when the
        limit does not exist. One GetItem, plus one BatchGetItem per 100 other shards."""
        root = self._get(keys.limit_pk(limit_id), keys.LIMIT_SK)
        if root is None:
            return []
        shape = self._remember(limit_id, root)
        L = self.models.limit
        pks = [keys.limit_shard_pk(limit_id, i) for i in range(1, shape.extent)]
        found = {item.pk: item for item in self._batch_get(L, [(pk, keys.LIMIT_SK) for pk in pks])}
        # A shard the root counts but not yet written (a resize or a growth under way) stands in with no cap.
        return [root, *(found.get(pk) or L(pk, keys.LIMIT_SK, available=0, holders={}) for pk in pks)]

    def _names(self, limit_id: str, holder_keys: set[str]) -> dict[str, str]:
        """Full names of the holders whose entries keep none (longer than ``NAME_INLINE_MAX``)."""
        L = self.models.limit
        wanted = [(keys.holder_name_pk(limit_id, k), keys.HOLDER_NAME_SK) for k in sorted(holder_keys)]
        return {item.pk.rsplit("#", 1)[1]: item.holder or "" for item in self._batch_get(L, wanted)}

    def get_limit(self, limit_id: str) -> LimitState | None:
        shards = self._read(limit_id)
        if not shards:
            return None
        found = [e for shard in shards for e in entries(raw_holders(shard))]
        names = self._names(limit_id, {e.key for e in found if not e.name}) if any(not e.name for e in found) else {}
        holders: dict[str, int] = defaultdict(int)
        taken_at: dict[str, dt.datetime] = {}
        for e in found:
            name = e.name or names.get(e.key, e.key)
            holders[name] += e.slots
            taken_at[name] = min(taken_at.get(name, e.taken_at), e.taken_at)
        limit = int(shards[0].limit or 0)
        return LimitState(limit=limit, available=limit - sum(holders.values()), holders=dict(holders),
                          taken_at=taken_at)
