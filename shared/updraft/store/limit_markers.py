"""A sharded limit's holder markers (``store/limits.py``): a mark per (holder, limit), written before its take and
removed after its release, so that a take of a limit spread over shards is placed by one conditional write on one
shard, without reading the others to learn whether the holder holds already.

Why: a holder may sit in any shard, so without a marker only a read of every shard (a BatchGetItem of ~N/4
items at N slots) told a retried take from a new one, on every take; that read was the hottest key of a
1,000-wide fan-out. The mark's conditional write is that check in one write on the holder's own partition: it
fails for a holder that holds (``Taken.HELD``, the mark as found coming back with the refusal at no read cost).

Where: one item per holder (``keys.holder_marker_pk``), one attribute per sharded limit it holds
(``keys.marker_attribute``: ``"<token>:<marked at, epoch ms>"``); each limit's take, release and crash recovery
marks and unmarks its own attribute. The item stays small (a digest per limit, a try holds a few) and lives on no
limit's partition. (Tries claimed through ``updraft.limits`` hold tickets, not entries: these marks serve the
limit items' remaining holders, runs and tries claimed before tickets.)

A limit of one shard (``extent`` 1: its root alone) needs none: its take is conditional on the root being the
only shard and the holder not in it. A limit grows from its root alone under a rebalance's lease, which then
marks the holders the root had (at most ``SHARD_ENTRIES``). A mark a crash left behind (a take that stopped
before its shard write, a release before its unmark) blocks its holder for at most ``MARKER_STALE``: an older
one is checked against the shards (a read) and taken over when the holder holds nowhere; DynamoDB's TTL removes
the item ``MARKER_TTL`` after its last mark.

A dead mark: the last release of a try that ended for good (success, failure, skip, up for retry; its worker's
``release_slots(final=True)``) leaves its mark, a release in one write instead of two. Its holder names that
try (``TIKey.holder``: dag, run, task, map index, try number), and nothing takes for it again: the instance's next
try is another holder, and a claim from a stale read of the instance that names it is refused at the mark
(``Taken.HELD``), which is right, as the try was claimed. Every release that can be followed by a take of the
same holder removes the mark as before: a claim's give-back, a deferral's or a reschedule's release (the next
half or poke keeps its try number), reconciliation, and the releases of a deleted run or DAG (whose run id a new
run may take again). A holder that does take again after a final release (none known) waits ``MARKER_STALE`` and
is then taken over as after a crash; TTL removes the item after ``MARKER_TTL``.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Sequence

from pynamodb.expressions.condition import BeginsWith, Condition
from pynamodb.expressions.operand import Path, Value

from updraft.store import keys
from updraft.store.limit_reads import LimitReads, raw_holders
from updraft.store.limit_shards import TOKEN_CHARS, entries
from updraft.store.models import LimitItem
from updraft.store.writes import Written, all_of, conditional, write_reporting

MARKER_STALE = dt.timedelta(seconds=60)  # a take or release that stopped this long ago has crashed
MARKER_TTL = dt.timedelta(days=1)


def _mark_value(token: str, now_ms: int) -> dict[str, str]:
    return {"S": f"{token[:TOKEN_CHARS]}:{now_ms}"}


def _found_mark(item: dict[str, object] | None, limit_id: str) -> tuple[str, int] | None:
    """The (token, marked at ms) of the holder's mark for ``limit_id`` in its marker item as returned raw."""
    value = (item or {}).get(keys.marker_attribute(limit_id))
    if not isinstance(value, dict) or "S" not in value:
        return None
    token, _, at = str(value["S"]).rpartition(":")
    return token, int(at or 0)


class LimitMarkers(LimitReads):
    def _write_marks(self, key: str, limit_ids: Sequence[str], token: str,
                     condition: Condition | None = None) -> Written:
        """One UpdateItem of the holder's marker item: a mark for each limit, on ``condition`` (default: none of
        them marked), the TTL pushed on."""
        L = self.models.limit
        now_ms = int(time.time() * 1000)
        paths = [Path(keys.marker_attribute(limit_id)) for limit_id in limit_ids]
        actions = [*(path.set(_mark_value(token, now_ms)) for path in paths),
                   L.expires.set(now_ms // 1000 + int(MARKER_TTL.total_seconds()))]
        if condition is None:
            condition = all_of(*(path.does_not_exist() for path in paths))
        return write_reporting(L(keys.holder_marker_pk(key), keys.HOLDER_MARKER_SK), actions=actions,
                               condition=condition)

    def _mark(self, limit_id: str, key: str, token: str) -> bool:
        """Mark the holder for the take of ``token``; False: it holds already (or a take of it is under way).

        A mark a crash left (older than ``MARKER_STALE``, its holder in no shard) is taken over."""
        written = self._write_marks(key, [limit_id], token)
        if written.landed:
            return True
        found = _found_mark(written.item, limit_id)
        if found is None or (written.resent and found[0] == token[:TOKEN_CHARS]):
            return found is not None  # ours, its acknowledgement lost (None: refused without a mark)
        if time.time() * 1000 - found[1] < MARKER_STALE.total_seconds() * 1000:
            return False
        if self._holds_anywhere(limit_id, key):
            return False
        path = Path(keys.marker_attribute(limit_id))
        return self._write_marks(key, [limit_id], token, condition=path == _mark_value(*found)).landed

    def _holds_anywhere(self, limit_id: str, key: str) -> bool:
        return any(e.key == key for shard in self._read(limit_id) for e in entries(raw_holders(shard)))

    def _unmark(self, limit_id: str, key: str, token: str | None = None) -> None:
        """Remove the holder's mark for the limit (with ``token``: only the one that take wrote)."""
        L = self.models.limit
        path = Path(keys.marker_attribute(limit_id))
        condition = path.exists() if token is None \
            else BeginsWith(path, Value({"S": f"{token[:TOKEN_CHARS]}:"}))  # type: ignore[no-untyped-call]
        row = L(keys.holder_marker_pk(key), keys.HOLDER_MARKER_SK)
        conditional(lambda: row.update(actions=[path.remove()], condition=condition))

    def _mark_root_holders(self, root: LimitItem, limit_id: str) -> None:
        """A limit that just grew from its root alone: the root's holders (taken without markers) get theirs, so
        a retried take of one of them is refused as it was before the growth.

        A holder released between the read of ``root`` and its mark's write would keep that mark (its release
        saw the limit grown and removed a mark not written yet), blocking its holder until the mark is stale:
        so the limit is read again after the marking (growth is rare: one Get and BatchGet), and the marks of
        holders gone from it are removed (each only the one written here, by its token). A release after that read
        removes the mark itself."""
        marked = {}
        for entry in entries(raw_holders(root)):
            if self._write_marks(entry.key, [limit_id], entry.token).landed:
                marked[entry.key] = entry.token
        if not marked:
            return
        still = {entry.key for shard in self._read(limit_id) for entry in entries(raw_holders(shard))}
        for key in marked.keys() - still:
            self._unmark(limit_id, key, marked[key])
