"""The scheduler's share of backfills: each tick, every active backfill gets its next runs (or completes); the end
of one of its runs drives its backfill at once (``wakeups.run_ended``), so its next run does not wait for a tick.

For one backfill: a run's slot of its backfill's limit is taken in the transaction that creates the run
(``run_slots.create_holding``), so the limit counts queued and running runs alike, and given back in the one that
ends it; :func:`~updraft.scheduling.backfills.next_step` decides from the slots held. Each new run is: created
holding its slot (a conditional put on its deterministic id, with the take), then the backfill's progress moved
on from the value read (a conditional update). Two schedulers doing this at once create each run once; a crash
anywhere leaves a state the next tick finishes. Runs created before tickets hold an entry of the store's limit
items instead, released here once they finished (or were never created, past the claim grace). Costs per active
backfill and tick: the limit reads, and two writes per run created.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from updraft.limits import Acquired, Full, held
from updraft.model.backfills import Backfill
from updraft.model.limits import backfill_runs_limit
from updraft.model.states import FINISHED_RUN_STATES
from updraft.scheduling.decisions.backfills import backfill_run, next_step, plan
from updraft.scheduling.holding import limits_table
from updraft.scheduling.pass_report import PassReport
from updraft.scheduling.reconcile import CLAIM_GRACE
from updraft.scheduling.run_slots import create_holding
from updraft.serialization.model import SerializedDAG
from updraft.store.api import Store


def drive_backfills(store: Store, dag: Callable[[str, str], SerializedDAG], *, now: dt.datetime,
                    report: PassReport) -> None:
    for backfill in store.active_backfills(now):
        drive_backfill(store, dag(backfill.dag_id, backfill.dag_hash), backfill, now=now, report=report)


def drive_backfill(store: Store, dag: SerializedDAG, backfill: Backfill, *, now: dt.datetime,
                   report: PassReport) -> None:
    planned = plan(dag, backfill)
    step = next_step(backfill, planned, active_runs=release_finished_runs(store, backfill.dag_id, now=now))
    if step.complete:
        store.complete_backfill(backfill.id, now=now)
        return
    created = backfill.created
    for info in step.create:
        run = backfill_run(backfill, info, now=now)
        outcome = create_holding(store, run, backfill.max_active_runs)
        if isinstance(outcome, Full):
            return  # max_active_runs reached (the limit was smaller than read)
        if isinstance(outcome, Acquired):  # (Lost: another scheduler created it)
            report.runs_created.append(run.run_id)
        if not store.advance_backfill(backfill.id, expected_created=created, created=created + 1, now=now):
            return  # another scheduler moved it on (or it was paused or cancelled): the rest is theirs
        created += 1


def release_finished_runs(store: Store, dag_id: str, *, now: dt.datetime) -> int:
    """Free the backfill slots runs created before tickets hold by an entry once they finished (or were never
    created, past the claim grace); returns how many runs hold a slot, by ticket or by entry."""
    limit_id = backfill_runs_limit(dag_id)
    state = store.get_limit(limit_id)
    holding = held(limits_table(store), limit_id)
    for run_id in state.holders if state else {}:
        run = store.get_run(dag_id, run_id)
        taken_at = state.taken_at.get(run_id, now) if state else now
        if (run is not None and run.state in FINISHED_RUN_STATES) or (run is None and now - taken_at >= CLAIM_GRACE):
            store.release_slots(limit_id, run_id)
        else:
            holding += 1
    return holding
