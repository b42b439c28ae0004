"""A try that defers, and a try that resumes, inside the worker (Airflow's task runner's deferral handling).

- ``deferral_of``: a raised ``TaskDeferred`` becomes the ``Deferral`` the try records. The trigger is serialized as
  Airflow serializes it (its ``serialize()`` classpath and kwargs) and its kwargs and ``next_kwargs`` must be
  JSON (datetimes allowed, as for XComs). A time trigger's end is known when the task defers: a Wait state, no
  compute. Any other trigger polls (kind ``poll``): the check function looks at it once per interval
  (``updraft.runtime.trigger_check``) until it fires or the deferral's timeout passes; its record's ``resume_at`` is
  that timeout (the scheduler's backstop fails the try there), or ``NO_TIMEOUT`` when there is none. A sensor
  with ``exponential_backoff`` (and ``max_wait``) has its looks spaced out the same way (``trigger_check``).
- ``start_trigger``: ``start_from_trigger=True`` with ``start_trigger_args`` defers at once, without ``execute``.
- ``resume``: a resumed try runs ``resume_execution(next_method, next_kwargs, context)`` instead of ``execute``; a
  sensor turns a deferral timeout into ``AirflowSensorTimeout`` and honours ``soft_fail``/``never_fail`` as
  Airflow's ``BaseSensorOperator.resume_execution`` does.
"""

from __future__ import annotations

import datetime as dt
import importlib
from typing import Any

from updraft.model.deferrals import POLL_KIND, Deferral
from updraft.model.hitl import CLASSPATH as HITL_CLASSPATH
from updraft.model.records import TaskInstance
from updraft.runtime.xcom import check_json, decode_value, encode_value
from updraft.sdk.exceptions import (
    AirflowException,
    AirflowSensorTimeout,
    AirflowSkipException,
    TaskDeferralError,
    TaskDeferralTimeout,
    TaskDeferred,
)
from updraft.triggers.base import BaseTrigger
from updraft.triggers.temporal import DateTimeTrigger

# A polling deferral without a timeout waits until its trigger fires: its record's end is far enough to be never.
NO_TIMEOUT = dt.datetime(9999, 1, 1, tzinfo=dt.UTC)


def _timeout(value: Any) -> dt.timedelta | None:
    if value is None:
        return None
    if isinstance(value, dt.timedelta):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return dt.timedelta(seconds=value)
    raise TaskDeferralError(f"a deferral's timeout is a timedelta or seconds, got {type(value).__name__}")


def _backoff(task: Any) -> tuple[bool, float | None]:
    """A sensor's ``exponential_backoff`` and ``max_wait`` (seconds), which its polling wait follows too."""
    if not getattr(task, "_is_sensor", False) or not getattr(task, "exponential_backoff", False):
        return False, None
    max_wait = getattr(task, "max_wait", None)
    return True, max_wait.total_seconds() if isinstance(max_wait, dt.timedelta) else None


def deferral_of(exc: TaskDeferred, *, task_id: str, now: dt.datetime, task: Any = None) -> Deferral:
    """The record of a deferral (``task``: the deferring operator, whose backoff a polling wait follows);
    TaskDeferralError when Updraft cannot wait for that trigger."""
    trigger = exc.trigger
    # Airflow's contract is serialize(): triggers that do not subclass BaseTrigger (the cross-DAG ones) qualify.
    if not isinstance(trigger, BaseTrigger) and not callable(getattr(trigger, "serialize", None)):
        raise TaskDeferralError(f"task {task_id!r} deferred to {trigger!r}, which is not a BaseTrigger")
    classpath, kwargs = trigger.serialize()
    end_from_trigger = bool(getattr(trigger, "end_from_trigger", False))
    if exc.method_name is None and not end_from_trigger:
        raise TaskDeferralError(f"task {task_id!r} deferred without a method_name to resume in")
    encoded_kwargs = encode_value(kwargs)
    check_json(encoded_kwargs, task_id=task_id, key="trigger kwargs")
    next_kwargs = encode_value(dict(exc.kwargs or {}))
    check_json(next_kwargs, task_id=task_id, key="next_kwargs")
    timeout = _timeout(exc.timeout)
    timeout_at = now + timeout if timeout is not None else None
    if classpath == HITL_CLASSPATH:  # a response resumes it (the REST route): the wait is to its timeout only
        moment = getattr(trigger, "timeout_datetime", None)
        return Deferral(classpath=classpath, kwargs=encoded_kwargs, next_method=exc.method_name,
                        next_kwargs=next_kwargs, resume_at=moment or NO_TIMEOUT, times_out=False, created_at=now,
                        timeout_at=moment)
    if not isinstance(trigger, DateTimeTrigger):
        if end_from_trigger:
            raise TaskDeferralError(f"task {task_id!r} deferred to {classpath} with end_from_trigger: Updraft ends "
                                    "a task from its trigger only for the time triggers")
        exponential, max_wait_s = _backoff(task)
        return Deferral(classpath=classpath, kwargs=encoded_kwargs, next_method=exc.method_name,
                        next_kwargs=next_kwargs, resume_at=timeout_at or NO_TIMEOUT,
                        times_out=timeout_at is not None, kind=POLL_KIND, created_at=now, timeout_at=timeout_at,
                        exponential_backoff=exponential, max_wait_s=max_wait_s)
    moment = trigger.moment
    times_out = timeout_at is not None and timeout_at < moment
    # The event a time trigger fires: TriggerEvent(moment), or TaskSuccessEvent with end_from_trigger (the task
    # ends as success, no worker resumes it).
    return Deferral(classpath=classpath, kwargs=encoded_kwargs, next_method=exc.method_name,
                    next_kwargs=next_kwargs, resume_at=timeout_at if times_out and timeout_at else moment,
                    times_out=times_out, event=None if end_from_trigger else encode_value(moment),
                    end_from_trigger=end_from_trigger, created_at=now, timeout_at=timeout_at)


def start_trigger(task: Any) -> TaskDeferred | None:
    """The deferral a ``start_from_trigger`` task starts with (None: it starts with ``execute``)."""
    args = getattr(task, "start_trigger_args", None)
    if not getattr(task, "start_from_trigger", False) or args is None:
        return None
    module_name, _, class_name = args.trigger_cls.rpartition(".")
    trigger_class = getattr(importlib.import_module(module_name), class_name)
    # As Airflow's triggerer: the kwargs that are also the task's template fields take the rendered values.
    template_fields = set(getattr(task, "template_fields", ()))
    kwargs = {name: getattr(task, name) if name in template_fields and hasattr(task, name) else value
              for name, value in (args.trigger_kwargs or {}).items()}
    return TaskDeferred(trigger=trigger_class(**kwargs), method_name=args.next_method, kwargs=args.next_kwargs,
                        timeout=args.timeout)


def resume_point(ti: TaskInstance | None) -> tuple[str, dict[str, Any]] | None:
    """(next_method, next_kwargs) of a resumed try, decoded; None for a try that starts with ``execute``."""
    if ti is None or ti.next_method is None:
        return None
    return ti.next_method, decode_value(dict(ti.next_kwargs or {}))


def resume(task: Any, point: tuple[str, dict[str, Any]], context: Any) -> Any:
    """Run the resumed try's method (``resume_execution``, with a sensor's conversions)."""
    next_method, next_kwargs = point
    if not getattr(task, "_is_sensor", False):
        return task.resume_execution(next_method, next_kwargs, context)
    try:
        try:
            return task.resume_execution(next_method, next_kwargs, context)
        except TaskDeferralTimeout as exc:
            raise AirflowSensorTimeout(*exc.args) from exc
    except (AirflowException, TaskDeferralError) as exc:
        if getattr(task, "soft_fail", False):
            raise AirflowSkipException("Skipping due to soft_fail is set to True.") from exc
        if getattr(task, "never_fail", False):
            raise AirflowSkipException("Skipping due to never_fail is set to True.") from exc
        raise
