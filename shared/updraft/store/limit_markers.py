"""A sharded limit's holder markers (``store/limits.py``): one small item per holder, written before its take and
deleted after its release, so that a take of a limit spread over shards is placed by one conditional write on one
shard, without reading the others to learn whether the holder holds already.

Why: a holder may sit in any shard, so without a marker only a read of every shard (a BatchGetItem of ~N/4
items at N slots) told a retried take from a new one, on every take; that read was the hottest key of a
1,000-wide fan-out. The marker's conditional put is that check in one write on the holder's own partition: it
fails for a holder that holds (``Taken.HELD``, the marker as found coming back with the refusal at no read cost).

A limit of one shard (``extent`` 1: its root alone) needs none: its take is conditional on the root being the
only shard and the holder not in it. A limit grows from its root alone under a rebalance's lease, which then
marks the holders the root had (at most ``SHARD_ENTRIES``). A marker a crash left behind (a take that stopped
before its shard write, a release before its marker's delete) blocks its holder for at most ``MARKER_STALE``:
an older one is checked against the shards (a read) and taken over when the holder holds nowhere; DynamoDB's TTL
removes what is left after ``MARKER_TTL``.

A dead marker: the last release of a try that ended for good (success, failure, skip, up for retry; its worker's
``release_slots(final=True)``) leaves its marker, a release in one write instead of two. Its holder names that
try (``TIKey.holder``: dag, run, task, map index, try number), and nothing takes for it again: the instance's next
try is another holder, and a claim from a stale read of the instance that names it is refused at the marker
(``Taken.HELD``), which is right, as the try was claimed. Every release that can be followed by a take of the
same holder deletes the marker as before: a claim's give-back, a deferral's or a reschedule's release (the next
half or poke keeps its try number), reconciliation, and the releases of a deleted run or DAG (whose run id a new
run may take again). A holder that does take again after a final release (none known) waits ``MARKER_STALE`` and
is then taken over as after a crash; TTL removes the marker after ``MARKER_TTL``.
"""

from __future__ import annotations

import datetime as dt
import functools
import time

from updraft.store import keys
from updraft.store.limit_reads import LimitReads, raw_holders
from updraft.store.limit_shards import TOKEN_CHARS, entries
from updraft.store.models import LimitItem
from updraft.store.writes import conditional, item_absent, write_reporting

MARKER_STALE = dt.timedelta(seconds=60)  # a take or release that stopped this long ago has crashed
MARKER_TTL = dt.timedelta(days=1)


class LimitMarkers(LimitReads):
    def _marker(self, limit_id: str, key: str, token: str) -> LimitItem:
        now_ms = int(time.time() * 1000)
        return self.models.limit(keys.holder_name_pk(limit_id, key), keys.HOLDER_MARKER_SK, token=token[:TOKEN_CHARS],
                                 marked_at=now_ms, expires=now_ms // 1000 + int(MARKER_TTL.total_seconds()))

    def _mark(self, limit_id: str, key: str, token: str) -> bool:
        """Mark the holder for the take of ``token``; False: it holds already (or a take of it is under way).

        A marker a crash left (older than ``MARKER_STALE``, its holder in no shard) is taken over."""
        L = self.models.limit
        for _ in range(2):
            written = write_reporting(self._marker(limit_id, key, token), condition=item_absent(L))
            if written.landed:
                return True
            if written.item is not None:
                break
        found = L.from_raw_data(written.item) if written.item else None
        if found is None or (written.resent and found.token == token[:TOKEN_CHARS]):
            return found is not None  # ours, its acknowledgement lost (None: refused twice without an item)
        if time.time() * 1000 - int(found.marked_at or 0) < MARKER_STALE.total_seconds() * 1000:
            return False
        if self._holds_anywhere(limit_id, key):
            return False
        marker = self._marker(limit_id, key, token)
        return conditional(functools.partial(marker.save, condition=L.token == found.token))

    def _holds_anywhere(self, limit_id: str, key: str) -> bool:
        return any(e.key == key for shard in self._read(limit_id) for e in entries(raw_holders(shard)))

    def _unmark(self, limit_id: str, key: str, token: str | None = None) -> None:
        """Delete the holder's marker (with ``token``: only the one that take wrote)."""
        L = self.models.limit
        row = L(keys.holder_name_pk(limit_id, key), keys.HOLDER_MARKER_SK)
        conditional(functools.partial(row.delete, condition=None if token is None else L.token == token[:TOKEN_CHARS]))

    def _mark_root_holders(self, root: LimitItem, limit_id: str) -> None:
        """A limit that just grew from its root alone: the root's holders (taken without markers) get theirs, so
        a retried take of one of them is refused as it was before the growth.

        A holder released between the read of ``root`` and its marker's write would keep that marker (its release
        saw the limit grown and deleted a marker not written yet), blocking its holder until the marker is stale:
        so the limit is read again after the marking (growth is rare: one Get and BatchGet), and the markers of
        holders gone from it are deleted (each only the one written here, by its token). A release after that read
        deletes the marker itself."""
        L = self.models.limit
        marked = {}
        for entry in entries(raw_holders(root)):
            marker = self._marker(limit_id, entry.key, entry.token)
            if conditional(functools.partial(marker.save, condition=item_absent(L))):
                marked[entry.key] = entry.token
        if not marked:
            return
        still = {entry.key for shard in self._read(limit_id) for entry in entries(raw_holders(shard))}
        for key in marked.keys() - still:
            self._unmark(limit_id, key, marked[key])
