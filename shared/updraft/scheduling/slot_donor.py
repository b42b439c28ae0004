"""The slots of a try that just ended, handed on to the tries its worker's mini scheduler claims next (issue 19).

A worker claims the ended try's downstream before it gives the try's slots back (the next task of a chain never
waits for a release), which cost a take and a release of each limit both tries count against: two writes of the
limit's item per limit, three limits for the plainest task. Handed on, a slot costs no write at all: the limit's
entry stays as it is, under the ended try's holder id, and the new try's queue write (which the claim makes
anyway) records that it holds its slot of that limit under that entry (``TaskInstance.limit_entries``). Its
release, later, removes that entry; a chain passes one entry from try to try.

Why the limit stays exact: the count never changes (one slot leaves the ended try, the same slot is the new
try's), so nothing is ever over the limit; what must not happen is the entry being removed while the new try runs.
Its removers are the donor's worker (which skips what it handed on: ``given``), the new try's own release, and
reconciliation, which keeps an entry while a try holding it is live or one that held it ended less than the claim
grace ago, a hand-over possibly in flight (``slot_holders``). Each limit's slot is handed on once, to one try, and
only with the same slots (a try needing more takes its own, the donor releasing its slot afterwards); a claim
that fails after taking a slot handed on gives it back to the donor (``take_back``), whose worker releases it.
A crash between the hand-over and the queue write leaves the entry to the donor's worker, which is gone: the
entry is then returned by reconciliation, as a crash between a take and the queueing leaves it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from updraft.model.limits import pool_limit
from updraft.model.records import TaskInstance


@dataclass(frozen=True)
class Handed:
    """One limit's slot as the ended try holds it: how many slots, under which entry, in which shard."""

    slots: int
    entry: str
    shard: int | None


@dataclass
class SlotDonor:
    offered: dict[str, Handed]  # limit id -> the ended try's slot there, until handed on
    given: set[str] = field(default_factory=set)  # limits whose slot a new try holds now: not released by the donor
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def of(cls, ended: TaskInstance) -> SlotDonor:
        """What the ended try holds: its pool's ``pool_slots`` and one slot of every other limit it lists (as
        ``claims.limits_for`` took them)."""
        pool = pool_limit(ended.pool)
        return cls({limit_id: Handed(ended.pool_slots if limit_id == pool else 1, ended.entry(limit_id),
                                     ended.limit_shards.get(limit_id))
                    for limit_id in ended.held_limits})

    def hand_on(self, limit_id: str, slots: int) -> Handed | None:
        """The ended try's slot of ``limit_id`` for a new try needing ``slots`` of it; None when there is none
        to give (not held, handed on already, or another number of slots). The claims of one call take their
        limits concurrently: the offer is taken under a lock."""
        with self._lock:
            handed = self.offered.get(limit_id)
            if handed is None or handed.slots != slots:
                return None
            del self.offered[limit_id]
            self.given.add(limit_id)
            return handed

    def take_back(self, limit_id: str, handed: Handed) -> None:
        """A claim that took the slot did not queue its try: the slot is the donor's again (to hand on or
        release)."""
        with self._lock:
            self.given.discard(limit_id)
            self.offered[limit_id] = handed
