"""Airflow's ``NotInRetryPeriodDep`` and ``ReadyToRescheduleDep``: a try waiting for its time is not runnable yet.

``up_for_retry`` waits until ``next_retry_at`` (computed by ``retries.failure_outcome`` when the try failed);
``up_for_reschedule`` (a sensor in reschedule mode) waits until the time its worker recorded in the same field.
The run's deadlock check ignores both waits (``ignore=True``), as Airflow's ``_are_premature_tis`` does: a task
that will retry later is not stuck.
"""

from __future__ import annotations

import datetime as dt

from updraft.model.states import TaskInstanceState
from updraft.scheduling.decisions.deps.base import DepStatus, failing, passing

RETRY_NAME = "Not In Retry Period"
RESCHEDULE_NAME = "Ready To Reschedule"


def not_in_retry_period_status(state: TaskInstanceState | None, next_retry_at: dt.datetime | None,
                               now: dt.datetime, *, ignore: bool = False) -> DepStatus:
    if ignore:
        return passing(RETRY_NAME, "The context specified that being in a retry period was permitted.")
    if state != TaskInstanceState.UP_FOR_RETRY:
        return passing(RETRY_NAME, "The task instance was not marked for retrying.")
    if next_retry_at is not None and now < next_retry_at:
        return failing(RETRY_NAME, f"Task is not ready for retry yet but will be retried automatically. Current "
                                   f"date is {now.isoformat()} and task will be retried at "
                                   f"{next_retry_at.isoformat()}.")
    return passing(RETRY_NAME, "The task instance's retry time has come.")


def ready_to_reschedule_status(state: TaskInstanceState | None, reschedule_at: dt.datetime | None,
                               now: dt.datetime, *, ignore: bool = False) -> DepStatus:
    if ignore or state != TaskInstanceState.UP_FOR_RESCHEDULE:
        return passing(RESCHEDULE_NAME, "The task instance is not waiting to be rescheduled.")
    if reschedule_at is not None and now < reschedule_at:
        return failing(RESCHEDULE_NAME, f"Task is not ready for reschedule yet but will be rescheduled "
                                        f"automatically. Current date is {now.isoformat()} and task will be "
                                        f"rescheduled at {reschedule_at.isoformat()}.")
    return passing(RESCHEDULE_NAME, "The task instance's reschedule time has come.")
