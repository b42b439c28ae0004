"""Wake-ups on the second: what is due at a known moment is scheduled at that moment, not at the next tick.

Airflow's scheduler loop comes round every second or so; Updraft's tick is an EventBridge rule (a minute at
best). So what becomes due at a moment known in advance gets a wake-up: an execution of the deferral state
machine that waits until the moment and invokes the worker with what to do (``model.wakeups``), as a
reschedule-mode sensor's next poke already did (``runtime.next_poke``):

- **a scheduled run**: whoever advances a DAG's next run (the one conditional write that moves it, so once per
  due moment) starts the wake for the new one (``wake_for_next_run``); the wake creates the DAG's due runs and
  schedules them at once (``run_due_now``: the run starts and its first tasks are claimed in that invocation).
  Each tick also arms the wakes of every DAG due before the tick after next (``arm_wakes``), so a DAG that was
  just registered, unpaused, or whose wake's start was lost still gets one: the names are deterministic (one per
  DAG and moment), so arming again is the same execution, never a second one.
- **a retry** after its ``retry_delay``: whoever writes ``up_for_retry`` (the worker, or the scheduler for a zombie
  or a timeout) starts a wake at ``next_retry_at`` that schedules the run (``wake_for_retry``).
- **a backfill's next run**, and a scheduled run held back by ``max_active_runs``: due when a run of the DAG ends
  and frees its slot, so the write that ends the run creates them at once (``run_ended``).

A wake that finds nothing to do changes nothing (run ids are deterministic, claims conditional). Starting a wake
never raises: the tick stays the backstop of everything here, and can therefore come every 5-15 minutes.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from typing import TYPE_CHECKING, Any

from updraft.model.records import DagRun, TaskInstance
from updraft.model.states import DagRunType, TaskInstanceState
from updraft.model.wakeups import (
    retry_execution_name,
    run_due_execution_name,
    run_due_payload,
    schedule_run_payload,
    wake_input,
)
from updraft.scheduling.backfill_pass import drive_backfill
from updraft.scheduling.deferrals import Waits
from updraft.scheduling.pass_report import PassReport
from updraft.store.api import DagMeta

if TYPE_CHECKING:
    from updraft.scheduling.scheduler import Scheduler

log = logging.getLogger(__name__)

# What one arming pass starts at most: a tick must stay a tick, however many DAGs fall due before the next one (the
# rest is armed by the next pass or created by it).
MAX_ARMED_PER_PASS = 500


def _start(waits: Waits | None, name: str, execution_input: dict[str, Any]) -> str | None:
    """Start the wake ``name`` (a repeated start is the same execution); None when there is no engine or the start
    failed (logged: the tick does the work late instead)."""
    if waits is None:
        return None
    try:
        waits.start(name, execution_input)
    except Exception:
        log.warning("could not start the wake-up %s; the tick will do its work", name, exc_info=True)
        return None
    return name


def wake_for_next_run(waits: Waits | None, dag_id: str, due: dt.datetime | None, *,
                      now: dt.datetime) -> str | None:
    """Wake the scheduler at ``due`` to create ``dag_id``'s next scheduled run; its name (None: nothing to wake
    for, as there is no next run or it is due already, and whoever is creating runs now creates it)."""
    if due is None or due <= now:
        return None
    return _start(waits, run_due_execution_name(dag_id, due), wake_input(due, run_due_payload(dag_id, due)))


def wake_for_retry(waits: Waits | None, ti: TaskInstance, *, now: dt.datetime) -> str | None:
    """Wake the scheduler at ``ti``'s ``next_retry_at`` to schedule its run (which claims the retry); None when
    ``ti`` does not wait for a retry or its delay is over already."""
    due = ti.next_retry_at
    if ti.state != TaskInstanceState.UP_FOR_RETRY or due is None or ti.try_id is None or due <= now:
        return None
    return _start(waits, retry_execution_name(ti.key, ti.try_number, ti.try_id),
                  wake_input(due, schedule_run_payload(ti.dag_id, ti.run_id)))


def arm_wakes(scheduler: Scheduler, upcoming: list[DagMeta], *, now: dt.datetime) -> list[str]:
    """The tick's share: start the wake of each of ``upcoming``, the active, unpaused DAGs whose next run falls
    due before the tick after next (``SchedulerConfig.tick_interval`` twice), as the index the tick's run creation
    reads lists them; the names started. One StartExecution per such DAG, nearest first."""
    if scheduler.waits is None or scheduler.config.max_dagruns_to_create_per_loop <= 0:
        return []  # no engine, or a scheduler that creates no scheduled runs (``dags test``)
    started = []
    for meta in upcoming[:MAX_ARMED_PER_PASS]:
        due = meta.next_dagrun_run_after
        name = wake_for_next_run(scheduler.waits, meta.dag_id, due, now=now) if due is not None else None
        if name is not None:
            started.append(name)
    return started


def run_due_now(scheduler: Scheduler, dag_id: str) -> PassReport:
    """A run-due wake: create ``dag_id``'s due scheduled runs (as the tick would, with the DAG's strong read) and
    schedule each at once: it starts within ``max_active_runs`` and its first tasks are claimed and dispatched."""
    report = PassReport()
    scheduler.create_due_runs(report, dag_ids=[dag_id])
    _schedule_created(scheduler, dag_id, report)
    return report


_ending = threading.local()


def run_ended(scheduler: Scheduler, run: DagRun) -> None:
    """The write that ended ``run`` decided it (so once per run end), its slot of ``max_active_runs`` given back:
    create now what waited for that slot, a backfill's next runs or the DAG's due scheduled run, and schedule them.

    A run created here that ends in its first pass (nothing but empty tasks) ends inside this call: its DAG is then
    queued and handled by the outermost call on this thread, so a long backfill never recurses deeper."""
    pending: list[DagRun] | None = getattr(_ending, "pending", None)
    if pending is not None:
        pending.append(run)
        return
    _ending.pending = pending = [run]
    try:
        while pending:
            ended = pending.pop(0)
            try:
                report = (_drive_backfill(scheduler, ended.dag_id) if ended.run_type == DagRunType.BACKFILL
                          else _create_due(scheduler, ended))
                _schedule_created(scheduler, ended.dag_id, report)
            except Exception:  # the run's end is written: what follows it is the tick's if this fails
                log.exception("what follows the end of %s/%s waits for the tick", ended.dag_id, ended.run_id)
    finally:
        _ending.pending = None


def _create_due(scheduler: Scheduler, run: DagRun) -> PassReport:
    """The DAG's scheduled runs due now (none unless one waited for ``max_active_runs``): one read of its row, none
    for a DAG without a schedule (its version says so from the cache)."""
    report = PassReport()
    dag_id = run.dag_id
    timetable = scheduler.dag(dag_id, run.dag_hash).timetable
    if timetable is None or not timetable.can_be_scheduled:
        return report
    meta = scheduler.store.get_dag_meta(dag_id)
    due = meta.next_dagrun_run_after if meta is not None else None
    if due is not None and due <= scheduler.clock():
        scheduler.create_due_runs(report, dag_ids=[dag_id])
    return report


def _drive_backfill(scheduler: Scheduler, dag_id: str) -> PassReport:
    """The DAG's active backfill moves on (its next runs, or its completion), as the tick's pass drives it."""
    report = PassReport()
    store = scheduler.store
    backfill_id = store.active_backfill_id(dag_id)
    backfill = store.get_backfill(backfill_id) if backfill_id is not None else None
    if backfill is not None and backfill.completed_at is None:
        drive_backfill(store, scheduler.dag(dag_id, backfill.dag_hash), backfill, now=scheduler.clock(),
                       report=report)
    return report


def _schedule_created(scheduler: Scheduler, dag_id: str, report: PassReport) -> None:
    for run_id in report.runs_created:
        scheduler.schedule_run(dag_id, run_id)
