"""The slots of a try that just ended, offered to the tries its worker's mini scheduler claims next (issue 19).

A worker claims the ended try's downstream before it gives the try's slots back (the next task of a chain never
waits for a release), which cost a take and a release of each limit both tries count against. With a donor, the
first claim of that mini-scheduler call that needs a limit the ended try holds takes the try's slots over in one
write (``Store.transfer_slots``); the worker's release afterwards skips the limits given. Each limit's slots are
offered once: to at most one new try, and a transfer refused (a sharded limit, a holder holding already, no room
for a larger try) falls back to the take, the donor keeping its slots for the release, as before.

Safety rests on the store's conditional write (never over the limit, never counted twice); what is left to this
side is that a slot given is never also released by the donor's worker (``given``) and that a claim that fails
after a transfer releases the new holder like any slot it took (``claims.claim``), so a crash between leaves a
holder the reconciliation returns, as a crash between a take and the queueing does.
"""

from __future__ import annotations

import datetime as dt
import threading
from dataclasses import dataclass, field

from updraft.model.limits import pool_limit
from updraft.model.records import TaskInstance
from updraft.store.api import Store, Taken


@dataclass
class SlotDonor:
    holder: str
    offered: dict[str, int]  # limit id -> the slots the ended try holds there, until given or refused
    given: set[str] = field(default_factory=set)  # limits whose slots went to a new try: not released by the donor
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def of(cls, ended: TaskInstance) -> SlotDonor:
        """What the ended try holds: its pool's ``pool_slots`` and one slot of every other limit it lists (as
        ``claims.limits_for`` took them); a wrong guess only makes the transfer's condition refuse it."""
        pool = pool_limit(ended.pool)
        return cls(ended.key.holder(ended.try_number),
                   {limit_id: ended.pool_slots if limit_id == pool else 1 for limit_id in ended.held_limits})

    def take(self, store: Store, limit_id: str, holder: str, slots: int, *, limit: int, now: dt.datetime,
             placed: dict[str, int] | None = None) -> Taken:
        """``store.take_slots``, by a transfer of the ended try's slots where they are offered (the claims of one
        call take their limits concurrently: the offer is taken under a lock)."""
        with self._lock:
            donor_slots = self.offered.pop(limit_id, None)
        if donor_slots is not None and store.transfer_slots(limit_id, self.holder, donor_slots, holder, slots,
                                                            now=now):
            with self._lock:
                self.given.add(limit_id)
            return Taken.YES
        return store.take_slots(limit_id, holder, slots, limit=limit, now=now, placed=placed)
