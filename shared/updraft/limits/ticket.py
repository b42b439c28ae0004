"""A holder's ticket: which limits it holds slots of, on which shard, how many; one string on the holder's item.

The ticket is the only record of what a holder holds: the counters know how many slots are free, never whose
the others are. It is written in the same transaction as the takes it records and removed (or shrunk) in the
same one as the gives (PROTOCOL.md, invariant 2). Its encoding is canonical (holds sorted by limit id, compact
JSON), so ``decode(text).encode() == text`` for every ticket this module wrote, and a release's condition
"the holder still carries this ticket" is a string equality: a repeated release, or a second partial one, finds
another string and changes nothing.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Collection, Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Hold:
    """``slots`` slots of ``limit_id``, taken from (and given back to) its shard ``shard``."""

    limit_id: str
    shard: int
    slots: int


@dataclass(frozen=True)
class Ticket:
    """What one holder holds: at most one ``Hold`` per limit, sorted by limit id, under a unique ``ticket_id``.
    Build with :meth:`new`; callers read ``limit_ids`` and ``slots`` and otherwise pass it back as it is."""

    ticket_id: str
    holds: tuple[Hold, ...]

    def __post_init__(self) -> None:
        ids = [hold.limit_id for hold in self.holds]
        if ids != sorted(set(ids)):
            raise ValueError(f"a ticket holds each limit once, sorted by limit id: {ids}")
        if any(hold.slots < 1 or hold.shard < 0 for hold in self.holds):
            raise ValueError(f"a hold has at least one slot and a shard >= 0: {self.holds}")

    @classmethod
    def new(cls, holds: Iterable[Hold] = (), ticket_id: str | None = None) -> Ticket:
        """A ticket of ``holds`` (any order) under ``ticket_id``, or a fresh one."""
        return cls(ticket_id or uuid.uuid4().hex, tuple(sorted(holds, key=lambda hold: hold.limit_id)))

    @property
    def limit_ids(self) -> tuple[str, ...]:
        return tuple(hold.limit_id for hold in self.holds)

    def slots(self, limit_id: str) -> int:
        """The slots held of ``limit_id`` (0: none)."""
        return next((hold.slots for hold in self.holds if hold.limit_id == limit_id), 0)

    def holds_exactly(self, needs: Iterable[tuple[str, int]]) -> bool:
        """Whether ``needs`` (limit id, slots; any order) are exactly what this ticket holds."""
        return sorted(needs) == [(hold.limit_id, hold.slots) for hold in self.holds]

    def adding(self, holds: Iterable[Hold]) -> Ticket:
        """This ticket with more holds, under the same id (a resumed try keeps what it kept while deferred)."""
        return Ticket(self.ticket_id, tuple(sorted((*self.holds, *holds), key=lambda hold: hold.limit_id)))

    def keeping(self, limit_ids: Collection[str]) -> Ticket | None:
        """The part of this ticket a partial release keeps (None: nothing), under the same id."""
        kept = tuple(hold for hold in self.holds if hold.limit_id in limit_ids)
        return Ticket(self.ticket_id, kept) if kept else None

    def encode(self) -> str:
        return json.dumps([self.ticket_id, [[h.limit_id, h.shard, h.slots] for h in self.holds]],
                          separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def decode(cls, text: str) -> Ticket:
        """The ticket ``encode`` wrote; ValueError for any other text."""
        try:
            ticket_id, holds = json.loads(text)
            ticket = cls(ticket_id, tuple(Hold(limit_id, shard, slots) for limit_id, shard, slots in holds))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"not a ticket: {text!r}") from exc
        if not isinstance(ticket_id, str) or any(
                not isinstance(h.limit_id, str) or type(h.shard) is not int or type(h.slots) is not int
                for h in ticket.holds) or ticket.encode() != text:
            raise ValueError(f"not a ticket: {text!r}")
        return ticket
