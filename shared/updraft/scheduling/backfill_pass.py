"""The scheduler's share of backfills: each tick, every active backfill gets its next runs (or completes); the end
of one of its runs drives its backfill at once (``wakeups.run_ended``), so its next run does not wait for a tick.

For one backfill: a run's slot of its backfill's limit is taken in the transaction that creates the run
(``run_slots.create_holding``), so the limit counts queued and running runs alike, and given back in the one that
ends it; :func:`~updraft.scheduling.decisions.backfills.next_step` decides from the slots held. Each new run is: created
holding its slot (a conditional put on its deterministic id, with the take), then the backfill's progress moved
on from the value read (a conditional update). Two schedulers doing this at once create each run once; a crash
anywhere leaves a state the next tick finishes. Costs per active backfill and tick: the limit's read, and two
writes per run created.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from updraft.limits import Acquired, Full, held
from updraft.model.backfills import Backfill
from updraft.model.limits import backfill_runs_limit
from updraft.scheduling.decisions.backfills import backfill_run, next_step, plan
from updraft.scheduling.holding import limits_table
from updraft.scheduling.pass_report import PassReport
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
    active_runs = held(limits_table(store), backfill_runs_limit(backfill.dag_id))
    step = next_step(backfill, planned, active_runs=active_runs)
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

