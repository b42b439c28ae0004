"""A try its executor lost: the process running it ended without ending the try (a Fargate task killed, out of
memory, crashed, or never started).

Airflow's scheduler fails such a task instance as soon as its executor reports the process finished while the
instance still says queued or running (``_process_executor_events``: "killed externally"), the way a failed try
fails: up_for_retry while retries are left, else failed, with the task's callbacks. Updraft does the same on the
executor's report (:class:`~updraft.executors.base.LostTry`) instead of waiting for the try's lease to run out;
the zombie backstop (``backstops``) still catches a loss no report announces.

Fenced by ``try_id`` and state: a report about an older try, or about a try that already ended (its worker
reported, or the scheduler failed it first), changes nothing, and a duplicate report loses the conditional write.
"""

from __future__ import annotations

import datetime as dt

from updraft.executors.base import LostTry
from updraft.model.records import TaskInstance
from updraft.model.states import SLOT_HOLDING_STATES
from updraft.scheduling.decisions.backstops import failed_change
from updraft.scheduling.decisions.changes import TIChange
from updraft.serialization.model import SerializedTask

KILLED_EXTERNALLY_NOTE = "killed externally"
_NOTE_LIMIT = 1000


def lost_try_change(task: SerializedTask, ti: TaskInstance, lost: LostTry, now: dt.datetime, *,
                    logical_date: dt.datetime | None) -> TIChange | None:
    """The failure of ``ti`` when ``lost`` is about its current try, still queued or running; else None."""
    if ti.try_id != lost.dispatch.try_id or ti.state not in SLOT_HOLDING_STATES:
        return None
    note = f"{KILLED_EXTERNALLY_NOTE}: {lost.reason}, while the try was {ti.state.value}"
    return failed_change(task, ti, now, logical_date, note[:_NOTE_LIMIT])
