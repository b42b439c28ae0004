"""What a try holds of its limits, and its release: the face of ``updraft.limits`` the scheduler and the worker
use for one instance.

A claimed try carries a ticket (``TaskInstance.ticket``, from ``updraft.limits.acquire``). A write that takes a
try out of holding carries its release in one transaction, conditional on the instance carrying the ticket as
read: a transition (``transition_releasing``), a clear's reset (``reset_releasing``), a deletion of the instance
(``delete_releasing``). ``release_ticket`` gives back a ticket's slots with a write of the ticket alone, for a try
found out of holding still carrying one. ``follow_parallelism`` keeps the parallelism limit at the size
configured.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from updraft.limits import (
    Acquired,
    Claim,
    Contended,
    Frees,
    Full,
    Lost,
    Table,
    Ticket,
    acquire,
    ensure,
    release,
    resize,
    size,
)
from updraft.model.limits import PARALLELISM_LIMIT
from updraft.model.records import TaskInstance
from updraft.model.states import TICKET_HOLDING_STATES, TaskInstanceState
from updraft.store.api import Store

logger = logging.getLogger(__name__)


def limits_table(store: Store) -> Table:
    """The limits' counters: the store's own table, written through the store's client."""
    return Table(*store.transaction_target())


def acquire_sized(store: Store, claim: Claim, known: Frees | None = None) -> Acquired | Full | Lost:
    """``claim`` through ``limits.acquire``. A limit found full whose size is not the one its need says (a pool
    resized, a DAG's max_active_tasks or max_active_runs or parallelism changed since the limit was created) is
    resized to it and the claim sent again: a claimer always knows each limit's size as configured now, and a
    resize is only looked for where it matters, at a refusal. ``known``: the claimer's ``Frees``."""
    table = limits_table(store)
    outcome = acquire(table, [claim], known)
    if isinstance(outcome, Full):
        meant = next(need.size for need in claim.needs if need.limit_id == outcome.limit_id)
        stored = size(table, outcome.limit_id)
        if stored is not None and stored != max(meant, -1) and resize(table, outcome.limit_id, meant):
            outcome = acquire(table, [claim], known)
    return outcome


def ticket_of(ti: TaskInstance) -> Ticket | None:
    """The ticket ``ti`` carries (None: it holds nothing through one)."""
    return Ticket.decode(ti.ticket) if ti.ticket else None


def held_limit_ids(ti: TaskInstance) -> set[str]:
    """Every limit ``ti`` holds a slot of (its ticket's)."""
    ticket = ticket_of(ti)
    return set(ticket.limit_ids) if ticket is not None else set()


def follow_parallelism(store: Store, parallelism: int) -> None:
    """Size the parallelism limit's counters to ``parallelism`` as configured now, created when absent: a
    redeploy (or a local restart with other --workers) that changes it then holds from this call on, not only
    from the first claim the old size refuses (``acquire_sized``). One read when they have that size already."""
    table = limits_table(store)
    try:
        if not resize(table, PARALLELISM_LIMIT, parallelism):
            ensure(table, PARALLELISM_LIMIT, parallelism)
    except Contended:
        # Claims held the counters on every attempt: the next check sizes them (a claim refused at the old size
        # resizes them meanwhile: ``acquire_sized``).
        logger.warning("parallelism's counters were contended; sized at the next check")


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


def releases(before: TaskInstance | None, state: TaskInstanceState) -> bool:
    """Whether a transition of ``before`` to ``state`` gives its ticket back: it holds one and leaves holding
    (queued, running, deferred), but for a deferred try resumed (scheduled again), which keeps what it kept."""
    return (before is not None and before.ticket is not None and state not in TICKET_HOLDING_STATES
            and not (before.state == TaskInstanceState.DEFERRED and state == TaskInstanceState.SCHEDULED))


def transition_releasing(store: Store, before: TaskInstance, *, expected: Iterable[TaskInstanceState | None],
                         state: TaskInstanceState, expected_try_id: str | None,
                         fields: Mapping[str, Any] | None) -> bool:
    """``before``'s transition to ``state`` (conditional on ``expected`` and ``expected_try_id``, as the store's
    named transitions are) and the release of its whole ticket, in one transaction, conditional on the instance
    carrying the ticket as read: True if it landed."""
    ticket = ticket_of(before)
    if ticket is None:
        raise ValueError(f"{before.key.label} holds no ticket to release")
    return release(limits_table(store),
                   lambda left, held: store.transition_item(before.key, expected=expected, state=state, ticket=left,
                                                            held_ticket=held, expected_try_id=expected_try_id,
                                                            fields=fields), ticket)


def reset_releasing(store: Store, ti: TaskInstance, *, fields: Mapping[str, Any]) -> bool:
    """A clear of ``ti`` (``Store.reset_ti``'s write, conditional on its state and try as read) and the release
    of its whole ticket, in one transaction, conditional on the instance carrying the ticket as read: True if it
    landed. No crash between the reset and the release can leave the slots held by an instance that no longer
    holds them."""
    ticket = ticket_of(ti)
    if ticket is None:
        raise ValueError(f"{ti.key.label} holds no ticket to release")
    return release(limits_table(store),
                   lambda _left, held: store.reset_item(ti.key, expected=ti.state, expected_try_id=ti.try_id,
                                                        fields=fields, held_ticket=held or ""), ticket)


def delete_releasing(store: Store, ti: TaskInstance) -> bool:
    """Delete ``ti``'s item and release its whole ticket, in one transaction, conditional on the instance carrying
    the ticket as read (a run's or a DAG's deletion, before the rest of its items go): True if it landed."""
    ticket = ticket_of(ti)
    if ticket is None:
        raise ValueError(f"{ti.key.label} holds no ticket to release")
    return release(limits_table(store), lambda _left, held: store.delete_ti_item(ti.key, held_ticket=held or ""),
                   ticket)
