"""What a try holds of its limits, and its release: the face of ``updraft.limits`` the scheduler and the worker
use for one instance.

A try claimed through ``updraft.limits.acquire`` carries a ticket (``TaskInstance.ticket``); one claimed before
it lists its limits in ``held_limits`` and is released through the store's limit items (``Store.release_slots``)
until every such try has ended. ``release_ticket`` gives back a ticket's slots with a write of the ticket alone
(conditional on the instance still carrying it), for the transitions that do not carry their release yet.
"""

from __future__ import annotations

from collections.abc import Collection

from updraft.limits import Table, Ticket, release
from updraft.model.records import TaskInstance
from updraft.store.api import Store


def limits_table(store: Store) -> Table:
    """The limits' counters: the store's own table, written through the store's client."""
    return Table(*store.transaction_target())


def ticket_of(ti: TaskInstance) -> Ticket | None:
    """The ticket ``ti`` carries (None: it holds nothing through one)."""
    return Ticket.decode(ti.ticket) if ti.ticket else None


def held_limit_ids(ti: TaskInstance) -> set[str]:
    """Every limit ``ti`` holds a slot of, by ticket or by an entry of the store's limit items."""
    ticket = ticket_of(ti)
    return set(ti.held_limits) | (set(ticket.limit_ids) if ticket is not None else set())


def release_ticket(store: Store, ti: TaskInstance, *, keep: Collection[str] = ()) -> bool:
    """Give back the slots of ``ti``'s ticket but those of the limits in ``keep`` (a deferral's kept pool slot),
    in one transaction with the instance's ticket removed (or shrunk to what is kept). Conditional on the
    instance carrying the ticket as ``ti`` read it: safe to repeat, and a ticket released by another changes
    nothing. True if this call released it."""
    ticket = ticket_of(ti)
    if ticket is None:
        return False
    return release(limits_table(store),
                   lambda kept, held: store.ticket_item(ti.key, ticket=kept, held_ticket=held or ""),
                   ticket, keep=keep)
