"""A run's slot of its run limit (a DAG's ``max_active_runs``, or its backfill's), through ``updraft.limits``.

A run takes its slot in the transaction of its ``queued -> running`` write (a backfill's run: of its creation,
so its backfill counts its queued runs too) and gives it back in the transaction of the write that ends its
holding (its end, a user's state, a cancel, its deletion), each conditional on the ticket it read: of two
schedulers starting one run one takes the slot, and no crash leaves a slot held by a run that holds none.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from updraft.limits import Acquired, Claim, Full, HolderWrite, Lost, Need, Ticket, held, release
from updraft.limits import size as limit_size
from updraft.model.backfills import DEFAULT_MAX_ACTIVE_RUNS
from updraft.model.records import DagRun
from updraft.model.states import DagRunState
from updraft.scheduling.decisions.backfills import run_limit
from updraft.scheduling.holding import acquire_sized, limits_table
from updraft.store.api import Store


def _need(run: DagRun, size: int) -> tuple[Need, ...]:
    return (Need(run_limit(run), 1, size),)


def start_holding(store: Store, run: DagRun, size: int | None, *, now: dt.datetime) -> Acquired | Full | Lost:
    """``run`` queued -> running with a slot of its run limit, in one transaction; ``Lost``: the run was not
    queued without a ticket as read (another scheduler started it). ``size``: the limit's as configured now (a
    DAG's max_active_runs); None: as stored (a backfill's, sized by its backfill: a backfill's run cleared or
    set queued after it gave its slot back takes one again), a backfill's default when not created yet."""
    limit_id = run_limit(run)
    if size is None:
        stored = limit_size(limits_table(store), limit_id)
        size = DEFAULT_MAX_ACTIVE_RUNS if stored is None else stored
    claim = Claim(lambda ticket, held_ticket: store.run_state_item(
        run.dag_id, run.run_id, expected=[DagRunState.QUEUED], state=DagRunState.RUNNING, now=now, ticket=ticket,
        held_ticket=held_ticket), _need(run, size))
    return acquire_sized(store, claim)


def create_holding(store: Store, run: DagRun, size: int) -> Acquired | Full | Lost:
    """Create ``run`` holding a slot of its run limit, in one transaction (a backfill's run); ``Lost``: a run of
    that id exists (another scheduler created it)."""
    claim = Claim(lambda ticket, _held: store.create_run_item(run, ticket=ticket or ""), _need(run, size))
    return acquire_sized(store, claim)


def set_state_releasing(store: Store, run: DagRun, *, expected: Iterable[DagRunState], state: DagRunState,
                        now: dt.datetime) -> bool:
    """``run`` -> ``state`` (conditional on ``expected``), giving back the slot it holds by ticket in the same
    transaction (a run holding none: the state write alone). ``run`` read before its ticket changed (the pass
    that started it, or another scheduler) is read again once. True if this call changed the state."""
    expected = list(expected)
    for _ in range(2):
        ticket = Ticket.decode(run.ticket) if run.ticket else None
        if ticket is None:
            return store.set_run_state(run.dag_id, run.run_id, expected=expected, state=state, now=now)
        if release(limits_table(store), _state_write(store, run, expected, state, now), ticket):
            return True
        fresh = store.get_run(run.dag_id, run.run_id)
        if fresh is None or fresh.ticket == run.ticket:
            return False
        run = fresh
    return False


def _state_write(store: Store, run: DagRun, expected: list[DagRunState], state: DagRunState,
                 now: dt.datetime) -> HolderWrite:
    return lambda _left, held_ticket: store.run_state_item(run.dag_id, run.run_id, expected=expected, state=state,
                                                           now=now, ticket=None, held_ticket=held_ticket)


def delete_releasing(store: Store, run: DagRun, *, expected: Iterable[DagRunState]) -> bool:
    """Delete ``run``'s item (conditional on ``expected``) and give back the slot it holds by ticket, in one
    transaction (a run holding none: the deletion alone). True if this call deleted it."""
    ticket = Ticket.decode(run.ticket) if run.ticket else None
    if ticket is None:
        return store.delete_run(run.dag_id, run.run_id, expected=expected)
    return release(limits_table(store), lambda _left, held_ticket: store.delete_run_item(
        run.dag_id, run.run_id, expected=expected, held_ticket=held_ticket or ""), ticket)


def holding(store: Store, limit_id: str) -> int:
    """How many runs hold a slot of the run limit ``limit_id`` now (its counters, strongly read)."""
    return held(limits_table(store), limit_id)
