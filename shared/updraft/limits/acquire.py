"""Acquire: 1..k holders claimed with their limits in one ``TransactWriteItems``, all or nothing.

The transaction holds each holder's own write (a task instance's ``scheduled -> queued``, built by the store,
carrying its new ticket, conditional on its state, its try and the ticket it carries) and one take per limit,
all holders' slots of that limit at once (``free >= total`` on one shard). Its cancellation says what to do
next, item by item:

- a holder's condition failed: another scheduler claimed it (``Lost``, naming which; nothing was taken), unless
  the request was resent and the holder carries this very write (its acknowledgement was lost: ``Acquired``);
- a take's condition failed: that shard was short. A one-shard limit's refusal carries its counter, so it is
  ``Full`` without a read; otherwise the limit is read (created first if it does not exist), and the take goes
  to the shard with room, or room is rebalanced into one shard, or the limit is ``Full`` (with its room, so a
  batch can ask again for fewer).

A claimer that acquires again and again (a pass claiming a wide run batch after batch) keeps ``Frees``: where
each limit's shards stood at its last read, less its own takes since, so its next take goes first to a shard
that had room, not to one drawn at random: a 64-slot shard holds two batches of 25, so random draws meet short
shards often, and each costs a read and another transaction.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from updraft.limits import counters
from updraft.limits.shape import ensure, rebalance
from updraft.limits.shards import counted_size, first_shard, pick_shard, rebalance_plan, room, shard_count, spread
from updraft.limits.table import Contended, Reason, Table
from updraft.limits.ticket import Hold, Ticket
from updraft.store.writes import TransactWrite

# A holder's write, given the ticket it is to carry and the one it must carry now (None: none): the store builds
# it (``TaskInstanceStore.transition_item``), conditional on that ticket as well as on its own state.
HolderWrite = Callable[[str | None, str | None], TransactWrite]
# Transactions an acquire sends before it gives up (``Contended``): each round after the first follows a short
# shard to one with room, which racing takers may have drained meanwhile.
ROUNDS = 8


@dataclass(frozen=True)
class Need:
    """``slots`` of ``limit_id``. ``size`` is used only to create a limit that does not exist yet (< 0:
    unlimited); changing an existing limit's size is ``resize``'s."""

    limit_id: str
    slots: int
    size: int


@dataclass(frozen=True)
class Claim:
    """One holder to claim: its write and its needs. ``held``: the ticket it carries already (a try resuming
    after a deferral kept its pool slot); the new holds are added to it, under its id."""

    holder: HolderWrite
    needs: tuple[Need, ...]
    held: Ticket | None = None


@dataclass(frozen=True)
class Acquired:
    """Every claim landed: each holder carries its ticket (in the claims' order)."""

    tickets: tuple[Ticket, ...]


@dataclass(frozen=True)
class Full:
    """Nothing landed: ``limit_id`` has not the slots the claims need together; ``room`` it has (a batch may ask
    again for what fits)."""

    limit_id: str
    room: int


@dataclass(frozen=True)
class Lost:
    """Nothing landed: the holders at these indexes of the claims were not in the state their writes expect
    (another scheduler claimed them); the others may be claimed again without them."""

    claims: tuple[int, ...]


class Frees:
    """One claimer's memory of limits' shards: each limit's free slots per shard as last read, less the slots it
    took since. Only a hint for where a take goes first: the take's own condition (``free >= n``) decides, and a
    refused take reads the limit again, which refreshes it. Others' takes and gives make it stale, so it is kept
    for one pass, not longer."""

    def __init__(self) -> None:
        self._frees: dict[str, list[int]] = {}

    def first(self, limit_id: str, slots: int, token: str) -> int | None:
        """A shard that had ``slots`` free (spread by ``token`` over those that had), or None: none known."""
        frees = self._frees.get(limit_id)
        fits = [shard for shard, free in enumerate(frees or ()) if free >= slots]
        return fits[spread(len(fits), token)] if fits else None

    def saw(self, limit_id: str, frees: Sequence[int]) -> None:
        self._frees[limit_id] = list(frees)

    def took(self, limit_id: str, shard: int, slots: int) -> None:
        frees = self._frees.get(limit_id)
        if frees is not None and shard < len(frees):
            frees[shard] -= slots


def acquire(table: Table, claims: Sequence[Claim], known: Frees | None = None) -> Acquired | Full | Lost:
    """Claim every holder of ``claims`` with its needs, in one transaction, or none of them (PROTOCOL.md,
    invariants 1-3). A holder appears once; k holders and their limits fit one transaction (<= 100 items).
    ``known``: the caller's ``Frees``, read for the first shard of each take and kept up to date."""
    totals = _totals(claims)
    ids = [claim.held.ticket_id if claim.held else uuid.uuid4().hex for claim in claims]
    known = known if known is not None else Frees()
    shards = {limit_id: _first(known, limit_id, slots, size, ids[0] + limit_id)
              for limit_id, (slots, size) in totals.items()}
    for _ in range(ROUNDS):
        tickets = [_ticket(claim, ticket_id, shards) for claim, ticket_id in zip(claims, ids, strict=True)]
        writes = [claim.holder(ticket.encode(), claim.held.encode() if claim.held else None)
                  for claim, ticket in zip(claims, tickets, strict=True)]
        outcome = table.transact([write.item for write in writes] +
                                 [counters.take(table, limit_id, shards[limit_id], slots)
                                  for limit_id, (slots, _) in totals.items()])
        if outcome.reasons is None:
            for limit_id, (slots, _) in totals.items():
                known.took(limit_id, shards[limit_id], slots)
            return Acquired(tuple(tickets))
        lost = tuple(index for index, reason in enumerate(outcome.reasons[:len(claims)]) if reason.failed)
        if lost:
            if outcome.resent and writes[0].landed():
                return Acquired(tuple(tickets))  # ours landed before the resent copy met it
            return Lost(lost)
        for (limit_id, (slots, size)), reason in zip(totals.items(), outcome.reasons[len(claims):], strict=True):
            if reason.failed:
                found = _short(table, limit_id, slots, size, shards[limit_id], reason, known)
                if isinstance(found, Full):
                    return found
                shards[limit_id] = found
    raise Contended(f"{len(claims)} claims were refused {ROUNDS} times by shards drained meanwhile")


def _totals(claims: Sequence[Claim]) -> dict[str, tuple[int, int]]:
    """Each limit's slots over all claims, and its size (limit id -> (slots, size)), in the order first needed."""
    if not claims:
        raise ValueError("acquire: no claims")
    totals: dict[str, tuple[int, int]] = {}
    for claim in claims:
        ids = [need.limit_id for need in claim.needs]
        if len(ids) != len(set(ids)) or any(need.slots < 1 for need in claim.needs):
            raise ValueError(f"acquire: a claim needs each limit once, at least one slot: {claim.needs}")
        if claim.held is not None and set(ids) & set(claim.held.limit_ids):
            raise ValueError(f"acquire: a claim needs {sorted(set(ids) & set(claim.held.limit_ids))} it holds")
        for need in claim.needs:
            slots, size = totals.get(need.limit_id, (0, need.size))
            if counted_size(size) != counted_size(need.size):
                raise ValueError(f"acquire: claims give {need.limit_id!r} two sizes ({size}, {need.size})")
            totals[need.limit_id] = (slots + need.slots, size)
    return totals


def _first(known: Frees, limit_id: str, slots: int, size: int, token: str) -> int:
    """The shard a take of ``slots`` tries first: one ``known`` to have had them, else one drawn by ``token``."""
    found = known.first(limit_id, slots, token)
    return found if found is not None else first_shard(shard_count(size), token)


def _ticket(claim: Claim, ticket_id: str, shards: dict[str, int]) -> Ticket:
    holds = [Hold(need.limit_id, shards[need.limit_id], need.slots) for need in claim.needs]
    return claim.held.adding(holds) if claim.held else Ticket.new(holds, ticket_id)


def _short(table: Table, limit_id: str, slots: int, size: int, shard: int, reason: Reason,
           known: Frees) -> int | Full:
    """Where to take ``slots`` of ``limit_id`` next, its take on ``shard`` refused as ``reason``; or ``Full``.
    What a read finds goes into ``known``."""
    if reason.item is not None and counters.number(reason.item, counters.SHARDS) == 1:
        return Full(limit_id, max(0, counters.number(reason.item, counters.FREE) or 0))  # the whole limit, as it was
    limit = counters.read(table, limit_id)
    if limit is None:
        ensure(table, limit_id, size)  # (or another acquire did meanwhile: either way it exists now)
        return shard if shard < shard_count(size) else 0
    known.saw(limit_id, limit.frees)
    found = pick_shard(limit.frees, slots)
    if found is not None:
        return found
    plan = rebalance_plan(limit.frees, slots)
    if plan is None:
        return Full(limit_id, room(limit.frees))
    rebalance(table, limit_id, plan)  # refused: a donor was drained meanwhile, and the next round reads again
    return max(plan, key=lambda index: plan[index])
