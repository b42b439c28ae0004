"""Release: a holder's write that takes it out of holding (an end, a deferral, a clear, a mark, the reaper) and
its ticket's gives, in one ``TransactWriteItems``.

The holder's write is conditional on it still carrying the ticket as read (the string, whole), so of two
releases of one ticket one lands, and a repeated or late one changes nothing (PROTOCOL.md, invariant 4). A
partial release (a deferral keeping an ``include_deferred`` pool's slot) leaves the holder carrying the kept
part, a different string, so repeating it gives nothing twice either.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection

from updraft.limits import counters
from updraft.limits.acquire import HolderWrite
from updraft.limits.table import Table
from updraft.limits.ticket import Ticket

# A release's attempts before ``Contended`` (then its caller's invocation fails and is delivered again, when the
# lease check may already have failed the try as a zombie): about 10 s of jittered pauses on a shard that conflicts
# on every attempt, against a claim's ~50 ms. 40 (~2 s) was outlasted by 32 no-op tries at once on one-shard
# counters (bench/latency_bench.py, conflicts emulated).
RELEASE_ATTEMPTS = 200
RELEASE_CAP_S = 0.1


def release(table: Table, holder: HolderWrite, ticket: Ticket, *, keep: Collection[str] = ()) -> bool:
    """Write ``holder`` (conditional on its carrying ``ticket``) and give back every slot ``ticket`` holds but
    those of the limits in ``keep``, all or nothing. True if it landed (or landed before a resent copy met it);
    False if the holder no longer carries ``ticket`` or its write's own condition failed (nothing given).

    A release is retried past conflicts far longer than a claim (``RELEASE_ATTEMPTS``, pauses up to
    ``RELEASE_CAP_S``): a claim that meets others on every attempt is tried again by a later pass, but the end
    of a try must land, and the slots it gives back are what the contending claims wait for.

    A limit whose counters no longer exist takes nothing back: the release lands without that give."""
    kept = ticket.keeping(keep)
    gives = [hold for hold in ticket.holds if hold.limit_id not in keep]
    patient = dataclasses.replace(table, backoff=dataclasses.replace(
        table.backoff, attempts=RELEASE_ATTEMPTS, cap_s=max(table.backoff.cap_s, RELEASE_CAP_S)))
    while True:
        write = holder(kept.encode() if kept else None, ticket.encode())
        outcome = patient.transact([write.item] + [counters.give(table, hold.limit_id, hold.shard, hold.slots)
                                                 for hold in gives])
        if outcome.reasons is None:
            return True
        if outcome.reasons[0].failed:
            return outcome.resent and write.landed()
        gives = [hold for hold, reason in zip(gives, outcome.reasons[1:], strict=True) if not reason.failed]
