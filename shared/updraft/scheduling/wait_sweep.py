"""The deferral sweep: nothing waits forever, and no execution waits for a try that is gone.

Ending a deferred try stops its execution (``deferrals.stop_waits``), and a try that defers starts one; either
call can be lost (an invocation that died between its write and its call, a throttled API). The scheduler's
tick runs this sweep, throttled (``SchedulerConfig.wait_sweep_interval``), and repairs both sides:

- an execution running for a try that is not deferred any more (cleared, marked, failed by a timeout, its run or
  DAG deleted) is stopped;
- a polling deferred try whose execution does not exist (a lost start) gets it started; one whose execution failed
  or was aborted fails as Airflow fails a try whose trigger failed (resumed in ``__fail__`` with ``Trigger
  failure``: it retries if it may); one whose execution succeeded without resuming it (a lost resume) is resumed.
  A time wait needs none of this: its end is known, and the scheduler's backstop resumes it 5 minutes past it
  whatever became of its execution (``deferrals.overdue_resume``).

The executions are listed before the tries are read, so a try that defers meanwhile is never taken for gone
(its execution starts after its deferred record is written), and executions younger than ``SWEEP_GRACE`` are
left alone. Next-poke wakes (``reschedule`` executions) end on their own and are not swept; asset watchers'
executions are ``asset_watchers.reconcile_watchers``'s.

What a sweep costs: one ListExecutions call per 100 running executions, one read of the task instances of each
active run, and one DescribeExecution per polling deferred try without a running execution (none when all is
well).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from updraft.model.asset_watches import is_watch_execution
from updraft.model.deferrals import POLL_KIND, TRIGGER_FAIL_REPR, TRIGGER_FAILURE, execution_name
from updraft.model.records import DagRun, TaskInstance
from updraft.model.states import TaskInstanceState
from updraft.scheduling.deferrals import Waits, resume_try, start_wait
from updraft.store.api import Store

log = logging.getLogger(__name__)

SWEEP_GRACE = dt.timedelta(seconds=60)
ENDED_BADLY = frozenset({"FAILED", "ABORTED", "TIMED_OUT"})


@runtime_checkable
class SweptWaits(Waits, Protocol):
    """An engine whose executions can be listed (Step Functions, local mode's engine through it)."""

    def running_executions(self) -> list[tuple[str, dt.datetime]]: ...

    def execution_status(self, name: str) -> str | None: ...


@dataclasses.dataclass
class SweepReport:
    stopped: list[str] = dataclasses.field(default_factory=list)  # executions whose try was gone
    started: list[str] = dataclasses.field(default_factory=list)  # lost starts, started now
    failed: list[str] = dataclasses.field(default_factory=list)  # tries whose execution failed: failed as Airflow
    resumed: list[str] = dataclasses.field(default_factory=list)  # tries whose resume was lost


def sweep_waits(store: Store, waits: SweptWaits, runs: Iterable[DagRun], *, now: dt.datetime) -> SweepReport:
    """Repair both sides once (see the module's docstring); every write is fenced by the try's token."""
    report = SweepReport()
    running = waits.running_executions()  # before the tries: see the module's docstring
    deferred = {execution_name(ti.key, ti.try_number, ti.try_id): ti
                for run in runs for ti in store.get_run_tis(run.dag_id, run.run_id)
                if ti.state == TaskInstanceState.DEFERRED and ti.try_id is not None}
    running_names = {name for name, _ in running}
    for name, started_at in running:
        if name in deferred or now - started_at < SWEEP_GRACE or _is_wake(name) or is_watch_execution(name):
            continue
        waits.stop(name)
        report.stopped.append(name)
    for name, ti in deferred.items():
        if name in running_names or (ti.trigger or {}).get("kind") != POLL_KIND:
            continue
        status = waits.execution_status(name)
        if status is None:
            start_wait(waits, ti)
            report.started.append(ti.key.label)
        elif status in ENDED_BADLY and _fail(store, ti, now=now, status=status):
            report.failed.append(ti.key.label)
        elif status == "SUCCEEDED" and _resume(store, ti, now=now):
            report.resumed.append(ti.key.label)
    if any((report.stopped, report.started, report.failed, report.resumed)):
        log.warning("deferral sweep repaired waits: %s", report)
    return report


def _is_wake(name: str) -> bool:
    """A next-poke wake's name ends with ``-r<count>`` (``reschedule_execution_name``); a try token never does."""
    return name.rpartition("-")[2].startswith("r")


def _fail(store: Store, ti: TaskInstance, *, now: dt.datetime, status: str) -> bool:
    """The wait's execution ended badly: the try resumes only to fail (Airflow's trigger failure)."""
    return store.apply_ti_change(
        ti.key, expected=TaskInstanceState.DEFERRED, state=TaskInstanceState.SCHEDULED, expected_try_id=ti.try_id,
        fields={"trigger": None, "lease_expires_at": None, "next_method": TRIGGER_FAIL_REPR,
                "next_kwargs": {"error": TRIGGER_FAILURE, "traceback": [f"its wait's execution ended {status}"]}})


def _resume(store: Store, ti: TaskInstance, *, now: dt.datetime) -> bool:
    """The execution succeeded but the try is still deferred: its resume was lost. A poll whose event was recorded,
    or one past its timeout, resumes as the resume would have; any other cannot have ended: it fails."""
    record = ti.trigger or {}
    timeout_at = record.get("timeout_at")
    timed_out = (bool(record.get("times_out")) and isinstance(timeout_at, str)
                 and dt.datetime.fromisoformat(timeout_at) <= now)
    if record.get("event") is None and not timed_out:
        return _fail(store, ti, now=now, status="SUCCEEDED without an event")
    if ti.try_id is None:
        return False
    return resume_try(store, ti.key, ti.try_id, now=now) is not None

