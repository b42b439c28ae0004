"""Hand-over: a holder's release and another's claim of the same slots, in one ``TransactWriteItems`` that
writes no counter.

A try that ends in a run where instances wait for slots frees slots the next waiting instance needs. Released
and then taken, those slots cross the limits' counters twice (a give and a take on each, in two transactions),
and the counters are the items every claim and release of a busy limit writes: the hottest of the protocol. A
hand-over moves the ended holder's ticket's holds to the next holder instead: the ended holder's write (its
ticket removed, conditional on carrying it) and the claim's write (a new ticket with the same holds, on the same
shards, conditional on the claim's state) in one transaction. Every shard's held slots stay what they were, so
``free`` stays true without being written (PROTOCOL.md, invariants 1 and 2); the claim's condition keeps
invariant 3, the ended holder's invariant 4.

Only a claim needing exactly what the ticket holds (the same limits, as many slots of each) is handed over; and
only while no shard of the ticket is over its share (``free >= 0``, read by the caller strongly just before: a
shrunk limit's excess is given back, not passed on: ``over_share``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from updraft.limits import counters
from updraft.limits.acquire import Claim, HolderWrite, Lost
from updraft.limits.table import Table
from updraft.limits.ticket import Ticket


@dataclass(frozen=True)
class Handed:
    """Both writes landed: the claim's holder carries ``ticket`` (the ended one's holds, a new id)."""

    ticket: Ticket


@dataclass(frozen=True)
class NotHeld:
    """Nothing landed: the ended holder no longer carries the ticket, or its own write's condition failed (its
    try was ended elsewhere)."""


def fits(claim: Claim, ticket: Ticket) -> bool:
    """Whether ``claim`` needs exactly what ``ticket`` holds (each limit once, as many slots), and holds nothing
    yet: the only claims a hand-over serves."""
    return claim.held is None and ticket.holds_exactly((need.limit_id, need.slots) for need in claim.needs)


def shard_ids(ticket: Ticket) -> list[tuple[str, int]]:
    """The counters (limit id, shard) whose ``free`` a hand-over of ``ticket`` is to be read against."""
    return [(hold.limit_id, hold.shard) for hold in ticket.holds]


def over_share(ticket: Ticket, items: Mapping[tuple[str, int], Mapping[str, Any]]) -> bool:
    """Whether a shard of ``ticket`` was read over its share (``free < 0``: a limit shrunk below what it holds) or
    not read (``items``: its counter items by limit id and shard, as ``shard_ids`` names them): then its slots are
    released, not handed over, so a shrunk limit's excess finishes as it does with releases."""
    return any((item := items.get(shard)) is None or (counters.number(item, counters.FREE) or 0) < 0
               for shard in shard_ids(ticket))


def hand_over(table: Table, ended: HolderWrite, ticket: Ticket, claim: Claim) -> Handed | NotHeld | Lost:
    """``ended``'s write, taking ``ticket`` off it, and ``claim``'s, carrying a new ticket of the same holds, all
    or nothing (``fits`` must hold). ``Lost``: the claim's holder was not in the state its write expects (another
    scheduler claimed it); nothing was written, the ended holder still carries ``ticket``. Conflicts are retried
    as a claim's (``Contended`` once spent)."""
    if not fits(claim, ticket):
        raise ValueError(f"hand_over: the claim needs {claim.needs}, the ticket holds {ticket.holds}")
    handed = Ticket.new(ticket.holds)
    end = ended(None, ticket.encode())
    take = claim.holder(handed.encode(), None)
    outcome = table.transact([end.item, take.item])
    if outcome.reasons is None:
        return Handed(handed)
    if outcome.resent and take.landed():
        return Handed(handed)  # ours landed before the resent copy met it
    if outcome.reasons[0].failed:
        return NotHeld()
    return Lost((0,))
