"""The scheduler's share of backfills: each tick, every active backfill gets its next runs (or completes); the end
of one of its runs drives its backfill at once (``wakeups.run_ended``), so its next run does not wait for a tick.

For one backfill: slots of its limit held by runs that finished are released (a run's slot is taken before the
run is created, so the limit counts queued and running runs alike); then :func:`~updraft.scheduling.backfills.
next_step` decides. Each new run is: take its slot (a holder already present is ours from an earlier, crashed
attempt), create the run (a conditional put on its deterministic id), move the backfill's progress on from the
value read (a conditional update). Two schedulers doing this at once create each run once; a crash anywhere
leaves a state the next tick finishes. Costs per active backfill and tick: the limit read, a run read per held
slot (at most ``max_active_runs``), and three writes per run created.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from updraft.model.backfills import Backfill
from updraft.model.limits import backfill_runs_limit
from updraft.model.states import FINISHED_RUN_STATES
from updraft.scheduling.backfills import backfill_run, next_step, plan
from updraft.scheduling.pass_report import PassReport
from updraft.scheduling.reconcile import CLAIM_GRACE
from updraft.serialization.model import SerializedDAG
from updraft.store.api import Store


def drive_backfills(store: Store, dag: Callable[[str, str], SerializedDAG], *, now: dt.datetime,
                    report: PassReport) -> None:
    for backfill in store.active_backfills(now):
        drive_backfill(store, dag(backfill.dag_id, backfill.dag_hash), backfill, now=now, report=report)


def drive_backfill(store: Store, dag: SerializedDAG, backfill: Backfill, *, now: dt.datetime,
                   report: PassReport) -> None:
    limit_id = backfill_runs_limit(backfill.dag_id)
    planned = plan(dag, backfill)
    step = next_step(backfill, planned, active_runs=release_finished_runs(store, backfill.dag_id, now=now))
    if step.complete:
        store.complete_backfill(backfill.id, now=now)
        return
    created = backfill.created
    for info in step.create:
        run = backfill_run(backfill, info, now=now)
        if not store.take_slots(limit_id, run.run_id, 1, limit=backfill.max_active_runs, now=now):
            held = store.get_limit(limit_id)
            if held is None or run.run_id not in held.holders:
                return  # max_active_runs reached (the limit was smaller than read)
        if store.create_run(run):
            report.runs_created.append(run.run_id)
        if not store.advance_backfill(backfill.id, expected_created=created, created=created + 1, now=now):
            return  # another scheduler moved it on (or it was paused or cancelled): the rest is theirs
        created += 1


def release_finished_runs(store: Store, dag_id: str, *, now: dt.datetime) -> int:
    """Free the backfill slots of runs that finished (or were never created, past the claim grace); returns how
    many runs still hold one."""
    limit_id = backfill_runs_limit(dag_id)
    state = store.get_limit(limit_id)
    holding = 0
    for run_id in state.holders if state else {}:
        run = store.get_run(dag_id, run_id)
        taken_at = state.taken_at.get(run_id, now) if state else now
        if (run is not None and run.state in FINISHED_RUN_STATES) or (run is None and now - taken_at >= CLAIM_GRACE):
            store.release_slots(limit_id, run_id)
        else:
            holding += 1
    return holding
