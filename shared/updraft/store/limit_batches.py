"""Takes of one sharded limit for several holders at once (issue 19): a pass that claims many ready tries (a fan-out's
first task's end claims all its middles) places up to ``SHARD_ENTRIES`` holders with one conditional write of a
shard, instead of one write (and its refusals) per holder.

Every holder is marked first, as a single take marks it (``limit_markers``: one conditional write per holder,
refused when the holder holds, wherever), so no holder is ever counted twice: by the batch, or before it, for all
the limits the claim takes in batches at once (``mark_holder``, given in ``marked``: one write per holder instead of
one per limit); the marked holders are then placed by shard, each write adding n entries on the condition that the
shard has room for their slots and for n more entries and that none of them holds in it
(``limits._take_entries_at``): the limit is never over its size and no shard item passes its entry cap (1 KB). A
refused write returns the shard as it was, which says how many it has room for: the next write asks for that many,
or the next shard is tried; after more than ``FAST_PROBES`` refusals in a row the batch stops. Holders are marked
only just before the write that places them, so what a batch leaves unplaced (at most one write's worth, and those
marked before it) is unmarked at once, and its callers take those one by one, as without a batch. The next batch of
the limit starts where this process's last one ended.

Only limits this process knows to be spread over shards (a limit that is its root alone takes without markers, one
write each) with a size (not unlimited), takes of at most a shard's slots, and holders whose names fit their
entries.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence

from updraft.store import keys
from updraft.store.limit_reads import raw_holders, shard_room
from updraft.store.limit_shards import SHARD_ENTRIES, SHARD_SLOTS, entry_value, inline_name, probe_order
from updraft.store.limits import FAST_PROBES, LimitStore
from updraft.store.models import LimitItem
from updraft.store.writes import write_token


def shard_takes(shard: LimitItem, slots: int) -> int:
    """How many takes of ``slots`` the shard has room for, by its slots and its entries."""
    return min(shard_room(shard) // slots, SHARD_ENTRIES - len(raw_holders(shard)))


class LimitBatches(LimitStore):
    def batchable(self, limit_id: str, slots: int) -> bool:
        """A limit this process takes in batches: known spread over shards, with a size, and takes of at most a
        shard's slots (more: a take in pieces, as single takes place it)."""
        shape = self._shape(limit_id)
        return shape is not None and shape.extent > 1 and shape.limit >= 0 and 0 < slots <= SHARD_SLOTS

    def take_slots_many(self, limit_id: str, holders: Sequence[str], slots: int, *, now: dt.datetime,
                        marked: Mapping[str, str] | None = None) -> dict[str, int] | None:
        premarked = {h: token for h, token in (marked or {}).items() if h in holders}
        shape = self._shape(limit_id)
        if shape is None or not self.batchable(limit_id, slots):
            self._unmark_all(limit_id, premarked)  # (the limit's shape changed since they were marked)
            return None
        queue = [h for h in dict.fromkeys(holders) if inline_name(h)]
        values = {h: entry_value(slots, now, premarked.get(h) or write_token(), h) for h in queue}
        placed: dict[str, int] = {}
        unplaced = [h for h in queue if h in premarked]  # marked, not placed yet
        self._unmark_all(limit_id, {h: token for h, token in premarked.items() if h not in values})  # not batched
        queue = [h for h in queue if h not in premarked]
        misses = 0  # writes refused in a row
        last: int | None = None
        first = (unplaced + queue)[:1]
        for index in self._batch_order(limit_id, first[0] if first else "", shape.active, slots):
            last, want = index, SHARD_ENTRIES
            while want > 0 and misses <= FAST_PROBES and (queue or unplaced):
                while len(unplaced) < want and queue:
                    holder = queue.pop(0)
                    if self._mark(limit_id, keys.holder_key(holder), str(values[holder][2])):
                        unplaced.append(holder)  # (refused: it holds already; its own take says so)
                group = unplaced[:want]
                if not group:
                    break
                landed, shard = self._take_entries_at(
                    limit_id, index, {keys.holder_key(h): values[h] for h in group})
                self._see_room(limit_id, index, shard)
                if shard is None:  # a shard the root counts but not yet written (a growth under way)
                    misses = FAST_PROBES + 1
                    break
                if landed:
                    placed.update(dict.fromkeys(group, index))
                    del unplaced[:len(group)]
                    misses = 0
                else:
                    misses += 1
                want = shard_takes(shard, slots)  # (refused: the shard as it was says what it has room for)
            if misses > FAST_PROBES or not (queue or unplaced):
                break
        self._unmark_all(limit_id, {holder: str(values[holder][2]) for holder in unplaced})
        if last is not None:
            self._batch_cursors.put(limit_id, last)
        return placed

    def _unmark_all(self, limit_id: str, tokens: Mapping[str, str]) -> None:
        for holder, token in tokens.items():
            self._unmark(limit_id, keys.holder_key(holder), token)

    def _batch_order(self, limit_id: str, first: str, active: int, slots: int) -> list[int]:
        """The shards a batch tries, in order: those seen with room for a take (most room first), else onward
        from where this process's last batch of the limit ended (the shards before it were filled), or from the
        first holder's home."""
        rooms = self._rooms(limit_id)
        if rooms is not None:
            return sorted((i for i, free in rooms.items() if free >= slots), key=lambda i: -rooms[i])
        start = self._batch_cursors.get(limit_id)
        if start is None or start >= active:
            start = keys.holder_shard(first, active) if first else 0
        return probe_order(start, active)
