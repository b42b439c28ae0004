"""Slots taken ahead, in one batch per limit, for the next tries a claim pass will claim (issue 19).

A pass claims its ready tries one by one (``claims.claim``: take every limit, then queue the instance), and a take
of a limit spread over shards costs a write of a shard per try. When the pass has many tries to claim (a fan-out's
first task's end claims all its middles), the tries next in line are taken ahead together: per limit, one
``Store.take_slots_many`` that places up to a shard's worth of holders per write (``store/limit_batches.py``), each
holder still marked, so never counted twice: for all the limits taken in batches with one write
(``Store.mark_holder``; a fan-out's middle: parallelism, default_pool and its run's max_active_tasks). Each claim
then finds its slots taken (``Reservations.take``) and writes nothing for them; everything else is as before: a
claim refused by another limit or that loses its queue write gives back what it took, reserved or not
(``claims.claim``), and a try the pass does not claim after all has its reserved slots given back before the pass
moves on (``release``), so a pass holds nothing past its own tries. A crash leaves what a crash between a take and
the queue write leaves, entries no try holds, which reconciliation returns after the grace (``reconcile``).

Only in a worker's pass after its try ended (the mini scheduler, the one pass that claims a fan-out's middles) and
while it has lost no race. Not in the scheduler's ticks, which race each other: a try taken ahead is one another
scheduler's claim finds held, and it then waits and takes the limit as full for the rest of its pass (8 schedulers
racing over 50 tries sent 5 times the requests per task). A limit a batch fell short on (near full) is not batched
again in that pass.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Sequence
from dataclasses import dataclass, field

from updraft.scheduling.claims import LimitNeed, named_pool_first
from updraft.scheduling.concurrent_writes import concurrently
from updraft.scheduling.slot_donor import SlotDonor
from updraft.store.api import Store

LOOKAHEAD = 32  # tries taken ahead at once: up to 8 shard writes per limit instead of 32


@dataclass
class Reservations:
    store: Store
    now: dt.datetime
    held: dict[tuple[str, str], int] = field(default_factory=dict)  # (limit id, holder) -> shard
    spent: set[str] = field(default_factory=set)  # limits a batch fell short on: not batched again

    def reserve(self, upcoming: Sequence[tuple[str, list[LimitNeed]]], donor: SlotDonor | None = None) -> None:
        """Take ahead, for the (holder, needs) of the tries next in line, every limit that two or more of them
        need (with the same slots), leaving to the donor the first try each of its slots would go to."""
        offered = {limit_id: slot.slots for limit_id, slot in (donor.offered if donor is not None else {}).items()}
        wanted: dict[tuple[str, int], list[str]] = {}
        for holder, needs in upcoming:
            for need in needs:
                if offered.get(need.limit_id) == need.slots:
                    del offered[need.limit_id]  # handed on to this try, unwritten (``slot_donor``)
                    continue
                if need.limit_id not in self.spent and (need.limit_id, holder) not in self.held:
                    wanted.setdefault((need.limit_id, need.slots), []).append(holder)
        batches = [(limit_id, slots, holders) for (limit_id, slots), holders in wanted.items() if len(holders) > 1]
        if batches and upcoming and named_pool_first(upcoming[0][1]) and batches[0][0] == upcoming[0][1][0].limit_id:
            # A named pool first and alone, as a claim takes it: the others only for the tries it admitted (none
            # when it is not taken in batches: a pool of a root's size admits a few, which single takes serve).
            pool = batches.pop(0)
            got = self._take(*pool) or {}
            admitted = set(got) | {h for h, needs in upcoming if pool[0] not in {n.limit_id for n in needs}}
            batches = [(limit_id, slots, [h for h in holders if h in admitted]) for limit_id, slots, holders in batches]
        batches = [batch for batch in batches if len(batch[2]) > 1]
        marked = self._mark(batches)
        concurrently([functools.partial(self._take, *batch, marked.get(batch[0], {})) for batch in batches])

    def _mark(self, batches: list[tuple[str, int, list[str]]]) -> dict[str, dict[str, str]]:
        """Each holder that two or more of the batches take marked for all of them in one write, instead of a
        write per limit in each batch: limit id -> holder -> its marks' token (a holder one of them holds already
        is left to the batches, which mark it limit by limit and learn which)."""
        limits_of: dict[str, list[str]] = {}
        for limit_id, slots, holders in batches:
            if self.store.batchable(limit_id, slots):
                for holder in holders:
                    limits_of.setdefault(holder, []).append(limit_id)
        several = [(holder, limit_ids) for holder, limit_ids in limits_of.items() if len(limit_ids) > 1]
        tokens = concurrently([functools.partial(self.store.mark_holder, holder, limit_ids)
                               for holder, limit_ids in several])
        marked: dict[str, dict[str, str]] = {}
        for (holder, limit_ids), token in zip(several, tokens, strict=True):
            if token is not None:
                for limit_id in limit_ids:
                    marked.setdefault(limit_id, {})[holder] = token
        return marked

    def _take(self, limit_id: str, slots: int, holders: list[str],
              marked: dict[str, str] | None = None) -> dict[str, int] | None:
        """One batch: the holders placed (None: not a limit taken in batches, its root alone: nothing sent)."""
        got = self.store.take_slots_many(limit_id, holders, slots, now=self.now, marked=marked)
        if got is not None and len(got) < len(holders):
            self.spent.add(limit_id)
        self.held.update({(limit_id, holder): shard for holder, shard in (got or {}).items()})
        return got

    def has(self, holder: str) -> bool:
        return any(h == holder for _, h in self.held)

    def take(self, limit_id: str, holder: str) -> tuple[bool, int | None]:
        """The reserved slot of ``limit_id`` for ``holder``, now the claim's: (whether there was one, its shard)."""
        shard = self.held.pop((limit_id, holder), None)
        return shard is not None, shard

    def release(self, holder: str | None = None) -> None:
        """Give back what is still reserved (for ``holder``; None: for every try), as a claim gives back a take."""
        gone = [(limit_id, h) for limit_id, h in self.held if holder is None or h == holder]
        concurrently([functools.partial(self.store.release_slots, limit_id, h, shard=self.held.pop((limit_id, h)))
                      for limit_id, h in gone])
