"""The scheduler's safety nets for tries whose worker went quiet: zombies, execution timeouts, stuck queues.

- Zombie: a running try whose worker lease expired (the worker stopped heart-beating: Lambda killed, Fargate task
  gone). Airflow fails it the way a failed try fails, so it retries if it has retries left.
- Execution timeout: the worker enforces ``execution_timeout`` itself; if a try is still running
  ``EXECUTION_TIMEOUT_GRACE`` after its deadline, the worker cannot be trusted to, and the scheduler fails it.
- Queued timeout: a try claimed but never started within ``QUEUED_TIMEOUT`` (Airflow's
  ``[scheduler] task_queued_timeout``, 600 s) goes back to ``scheduled`` to be claimed again, as Airflow's
  ``_reschedule_stuck_task`` does. The claim had counted it as a try; since it never ran, ``try_number`` is given
  back so the retry budget is not spent on a delivery problem (a stale worker is still fenced by ``try_id``).
- Orphaned: a queued try whose lease its executor expired on purpose (local mode stopping with the try still
  waiting for a worker) goes back to ``scheduled`` at once, the same way, like Airflow's
  ``adopt_or_reset_orphaned_tasks`` resetting the queued tasks of an executor that went away. A queued try
  otherwise never carries a lease, so nothing else takes this path.
- Deferred: a wait whose resume is overdue (its execution was lost) is resumed by the scheduler
  (``deferrals.overdue_resume``).
Every change is fenced by the try's ``try_id``, so a worker that reports after all loses cleanly.
"""

from __future__ import annotations

import datetime as dt

from updraft.model.records import TaskInstance
from updraft.model.states import TaskInstanceState
from updraft.scheduling.decisions.changes import TIChange
from updraft.scheduling.decisions.retries import failure_outcome
from updraft.scheduling.deferrals import overdue_resume
from updraft.serialization.model import SerializedTask

EXECUTION_TIMEOUT_GRACE = dt.timedelta(seconds=60)
QUEUED_TIMEOUT = dt.timedelta(seconds=600)
ZOMBIE_NOTE = "zombie: worker lease expired"
EXECUTION_TIMEOUT_NOTE = "execution_timeout: still running"


def backstop_change(task: SerializedTask, ti: TaskInstance, now: dt.datetime, *,
                    logical_date: dt.datetime | None) -> TIChange | None:
    if ti.state == TaskInstanceState.RUNNING:
        if ti.lease_expires_at is not None and ti.lease_expires_at < now:
            return failed_change(task, ti, now, logical_date, f"{ZOMBIE_NOTE} at {ti.lease_expires_at.isoformat()}")
        timeout = task.execution_timeout
        started = ti.start_date
        if timeout is not None and started is not None and started + timeout + EXECUTION_TIMEOUT_GRACE < now:
            return failed_change(task, ti, now, logical_date,
                         f"{EXECUTION_TIMEOUT_NOTE} {timeout} after it started (worker did not stop it)")
    elif ti.state == TaskInstanceState.QUEUED:
        if ti.lease_expires_at is not None and ti.lease_expires_at < now:
            return _requeue(ti, "its executor stopped before the try started; scheduled again")
        if ti.queued_at is not None and ti.queued_at + QUEUED_TIMEOUT < now:
            return _requeue(ti, f"queued for more than {int(QUEUED_TIMEOUT.total_seconds())} s without starting; "
                                f"scheduled again")
    elif ti.state == TaskInstanceState.DEFERRED:
        return overdue_resume(ti, now)
    return None


def _requeue(ti: TaskInstance, note: str) -> TIChange:
    """Back to scheduled with the try number given back: the try never ran, so it must not spend a retry (a try
    resuming after a deferral kept its number when claimed, so it has none to give back). A sensor's next poke
    (``reschedule_count``) took no number either: it goes back to what it was before its claim, the next poke of
    the same try (``claims.continues_try``); the stuck worker is fenced all the same."""
    fields: dict[str, object] = {
        "try_number": ti.try_number if ti.next_method is not None else max(ti.try_number - 1, 0), "try_id": None,
        "queued_at": None, "hostname": None, "lease_expires_at": None, "note": note}
    if ti.reschedule_count:
        fields.update(try_number=ti.try_number, try_id=ti.rescheduled_try_id)
    return TIChange(ti.key, ti.state, TaskInstanceState.SCHEDULED, fields, expected_try_id=ti.try_id)


def failed_change(task: SerializedTask, ti: TaskInstance, now: dt.datetime, logical_date: dt.datetime | None,
                  note: str) -> TIChange:
    """The try fails as a failed try does (Airflow's ``handle_failure``: up_for_retry while retries are left),
    fenced by its ``try_id``, its lease and wait cleared, ``note`` saying why."""
    state, fields = failure_outcome(task, ti, now, logical_date=logical_date)
    fields.update(note=note, lease_expires_at=None, trigger=None, next_method=None, next_kwargs=None)
    return TIChange(ti.key, ti.state, state, fields, expected_try_id=ti.try_id)
