"""A user's clear, mark or delete applied to the store: the decisions of
:mod:`~updraft.scheduling.decisions.clearing` and :mod:`~updraft.scheduling.decisions.marking` written as the
store's named transitions, with the limit slots the changed tries held given back.

Every write is conditional on the state (and try) that was read, so a request repeated after a timeout changes
nothing twice, and a worker or scheduler that changed an instance meanwhile keeps its change (that instance is
left out of the result). The caller nudges the scheduler afterwards, so cleared tasks start without waiting for
the next tick.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from updraft.model.records import DagRun, TaskInstance
from updraft.model.states import DagRunState
from updraft.scheduling import run_slots
from updraft.scheduling.decisions.changes import TIChange
from updraft.scheduling.decisions.clearing import Reset, as_recorded, run_state_after_clear
from updraft.scheduling.deferrals import Waits, stop_waits
from updraft.scheduling.holding import delete_releasing, releases, reset_releasing, transition_releasing
from updraft.store.api import Store
from updraft.store.state_stores import clear_task_states

_ALL_RUN_STATES = tuple(DagRunState)


def apply_resets(store: Store, run: DagRun, resets: Iterable[Reset], *, now: dt.datetime,
                 reset_dag_runs: bool = True, waits: Waits | None = None) -> list[TaskInstance]:
    """Clear each instance (its try recorded first), release what its try held, stop the wait of a deferred one
    (on ``waits``), and requeue the run when it had finished. Returns the instances cleared (as they were read)."""
    cleared = []
    for reset in resets:
        ti = reset.ti
        if ti.try_number > 0 and ti.state is not None:
            store.record_try(as_recorded(ti))
        if ti.ticket:  # the reset and the release of its ticket, one transaction
            if not reset_releasing(store, ti, fields=reset.fields):
                continue
        elif not store.reset_ti(ti.key, expected=ti.state, expected_try_id=ti.try_id, fields=reset.fields):
            continue
        cleared.append(ti)
    stop_waits(waits, cleared)
    new_state = run_state_after_clear(run.state, reset_dag_runs=reset_dag_runs)
    if cleared and new_state is not None:
        store.set_run_state(run.dag_id, run.run_id, expected=[run.state], state=new_state, now=now)
    return cleared


def apply_marks(store: Store, changes: Iterable[TIChange], *, before: dict[object, TaskInstance],
                waits: Waits | None = None) -> list[TIChange]:
    """Write each mark (fenced on the try read), releasing the slots of the tries it ended and stopping the waits
    of deferred ones (on ``waits``). ``before`` are the instances as read, by key. Returns the marks applied."""
    applied = []
    for change in changes:
        ti = before.get(change.key)
        if releases(ti, change.state):  # the mark and the release of its ticket, one transaction
            assert ti is not None
            if not transition_releasing(store, ti, expected=[change.expected], state=change.state,
                                        expected_try_id=change.expected_try_id, fields=change.fields):
                continue
        elif not store.mark_ti(change.key, expected=change.expected, state=change.state,
                               expected_try_id=change.expected_try_id, fields=change.fields):
            continue
        applied.append(change)
    stop_waits(waits, [before[change.key] for change in applied if change.key in before])
    return applied


def set_run_state(store: Store, run: DagRun, state: DagRunState, *, now: dt.datetime) -> bool:
    """The run's own state as a user set it (success, failed or queued). It gives back its ``max_active_runs``
    slot: a finished run holds none, and a queued one takes it again when the scheduler starts it, as Airflow
    counts only running runs against ``max_active_runs``."""
    return run_slots.set_state_releasing(store, run, expected=_ALL_RUN_STATES, state=state, now=now)


def delete_run(store: Store, run: DagRun, tis: Iterable[TaskInstance], *, deletable: Iterable[DagRunState],
               waits: Waits | None = None) -> bool:
    """Delete a run (only while in ``deletable``), what its tries held and its partition (instances, recorded
    tries, XComs) and its task instances' task state. False: the run was not (or no longer) deletable.

    An instance holding a ticket is deleted first, with its release in the same transaction; the run's item goes
    after, so a crash at any point leaves the run found and a retry releases what is still held. The caller has
    read the run in ``deletable`` (queued or finished, so no scheduler claims in it); should the scheduler start a
    queued run meanwhile, it runs without the instances deleted, which it schedules afresh."""
    tis = list(tis)
    for ti in tis:  # each ticket with its instance's deletion, before the run goes: a retry finds what is left
        if ti.ticket:
            delete_releasing(store, ti)
    if not run_slots.delete_releasing(store, run, expected=deletable):
        return False
    stop_waits(waits, tis)
    clear_task_states(store, [ti.key for ti in tis])
    store.delete_run_partition(run.dag_id, run.run_id)
    return True
