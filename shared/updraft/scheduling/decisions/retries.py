"""What a failed try implies: another try later (``up_for_retry`` and when), or ``failed`` for good.

try_number semantics: the scheduler increments ``try_number`` when it *claims* a try
(``scheduled -> queued``), so an instance that never ran has ``try_number == 0`` and the first try is 1. That is
the number Airflow 3 has while a try runs (Airflow increments it when it schedules the instance), so the retry
arithmetic below is Airflow's unchanged: the instance may retry while ``try_number <= retries``, and the delay
before the retry of try *n* is computed from *n*.

``next_retry_datetime`` is Airflow's formula: a fixed ``retry_delay``; or, with exponential backoff, a delay
between ``retry_delay * multiplier**(n-1)`` and twice that, chosen by a SHA-1 hash of
``dag_id#task_id#logical_date#try_number`` so every scheduler computes the same instant, capped at
``MAX_RETRY_DELAY`` (Airflow's ``[core] max_task_retry_delay``, 24 h) and then at the task's ``max_retry_delay``.
"""

from __future__ import annotations

import datetime as dt
import enum
import hashlib
import math
from typing import Any

from updraft import airflow_config
from updraft.model.records import TaskInstance
from updraft.model.states import TaskInstanceState
from updraft.serialization.model import SerializedTask

# Airflow's [core] max_task_retry_delay (seconds), from the scheduler's environment as Airflow's scheduler reads it.
MAX_RETRY_DELAY = airflow_config.get_int("core", "max_task_retry_delay", 24 * 60 * 60)
DEFAULT_RETRY_DELAY = dt.timedelta(seconds=300)


class _Unset(enum.Enum):
    """A default that says "not passed" where None is a meaningful value (a run with no logical date)."""

    UNSET = enum.auto()


_UNSET = _Unset.UNSET


def will_retry(task: SerializedTask, try_number: int, *, state: TaskInstanceState | None = TaskInstanceState.RUNNING,
               force_fail: bool = False, max_tries: int | None = None) -> bool:
    """Whether a try that failed gets another: the one decision the scheduler's outcome (``failure_outcome``) and
    the worker's choice of ``on_retry_callback`` over ``on_failure_callback`` both take.

    Airflow's ``TaskInstance.is_eligible_to_retry`` (``max_tries`` is the task's ``retries``), after
    ``handle_failure``'s ``force_fail``: a try cleared while running (``restarting``) is retried whatever its
    retries. A worker's try is ``running`` by construction (a try in any other state has its result refused).
    ``max_tries`` is the instance's own once a clear extended it (``try_number + retries`` at the clear).
    """
    if force_fail:
        return False
    if state == TaskInstanceState.RESTARTING:
        return True  # cleared while running: the try that was cut short is retried
    retries = max_tries if max_tries is not None else getattr(task, "retries", 0) or 0
    return bool(retries and try_number <= retries)


def backoff_multiplier(value: bool | float | None) -> float:
    """``retry_exponential_backoff``: False/0 means none, True means doubling, a number is the multiplier."""
    if value is True:
        return 2.0
    if not value:
        return 1.0
    return float(value)


def next_retry_datetime(task: SerializedTask, ti: TaskInstance, end_date: dt.datetime, *,
                        logical_date: dt.datetime | None) -> dt.datetime:
    delay = task.retry_delay if task.retry_delay is not None else DEFAULT_RETRY_DELAY
    multiplier = backoff_multiplier(task.retry_exponential_backoff)
    if multiplier != 1.0 and multiplier > 0:
        try:
            min_backoff = math.ceil(delay.total_seconds() * (multiplier ** (ti.try_number - 1)))
        except OverflowError:
            min_backoff = MAX_RETRY_DELAY
        min_backoff = max(min_backoff, 1)
        seed = f"{ti.dag_id}#{ti.task_id}#{_airflow_str(logical_date)}#{ti.try_number}"
        ti_hash = int(hashlib.sha1(seed.encode(), usedforsecurity=False).hexdigest(), 16)
        modded_hash = min_backoff + ti_hash % min_backoff
        delay = dt.timedelta(seconds=min(modded_hash, MAX_RETRY_DELAY))
        if task.max_retry_delay:
            delay = min(task.max_retry_delay, delay)
    return end_date + delay


def failure_outcome(task: SerializedTask, ti: TaskInstance, now: dt.datetime, *, force_fail: bool = False,
                    logical_date: dt.datetime | _Unset | None = _UNSET, retry_delay: dt.timedelta | None = None
                    ) -> tuple[TaskInstanceState, dict[str, Any]]:
    """State and fields for a try that failed at ``now`` (Airflow's ``handle_failure``). ``retry_delay``: a retry
    policy's delay for this retry, used as is (Airflow's ``retry_delay_seconds`` override).

    ``logical_date`` feeds the backoff jitter; when the caller does not pass the run's, it is read back from the
    run id (``scheduled__<date>`` / ``manual__<date>``), which is how Updraft names runs.
    """
    fields: dict[str, Any] = {"end_date": now, "next_retry_at": None}
    if not will_retry(task, ti.try_number, state=ti.state, force_fail=force_fail, max_tries=ti.max_tries):
        return TaskInstanceState.FAILED, fields
    if retry_delay is not None:
        fields["next_retry_at"] = now + retry_delay
        return TaskInstanceState.UP_FOR_RETRY, fields
    if logical_date is _UNSET:
        logical_date = logical_date_from_run_id(ti.run_id)
    fields["next_retry_at"] = next_retry_datetime(task, ti, now, logical_date=logical_date)
    return TaskInstanceState.UP_FOR_RETRY, fields


def logical_date_from_run_id(run_id: str) -> dt.datetime | None:
    _, sep, suffix = run_id.partition("__")
    if not sep:
        return None
    try:
        return dt.datetime.fromisoformat(suffix)
    except ValueError:
        return None


def _airflow_str(value: dt.datetime | None) -> str:
    """``str(logical_date)`` as Airflow formats it: a UTC datetime with a space separator, or "None"."""
    if value is None:
        return "None"
    v = (value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)).astimezone(dt.UTC)
    return str(dt.datetime(v.year, v.month, v.day, v.hour, v.minute, v.second, v.microsecond, tzinfo=dt.UTC))
