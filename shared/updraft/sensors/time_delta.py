"""Sensors that wait for a span of time, from the standard provider's ``sensors.time_delta``."""

from __future__ import annotations

import warnings
from datetime import timedelta
from typing import Any, ClassVar

from updraft.sdk import timezone
from updraft.sdk.exceptions import AirflowSkipException
from updraft.sensors.base import BaseSensorOperator
from updraft.triggers.temporal import DateTimeTrigger, TimeDeltaTrigger


def _require_timedelta(value: Any, name: str, operator: str) -> timedelta:
    # Airflow only notices a wrong type when the sensor first pokes; failing at parse time names the task now,
    # and keeps the value serializable for the scheduler, which computes the wake-up time itself.
    if not isinstance(value, timedelta):
        raise TypeError(f"{operator} `{name}` must be a datetime.timedelta, got {type(value).__name__}: {value!r}")
    return value


class TimeDeltaSensor(BaseSensorOperator):
    """Waits until ``delta`` after the run's ``data_interval_end`` (or ``run_after`` for manual runs).

    With ``deferrable=True`` the wait runs as a Step Functions timer instead of holding a worker.
    """

    extra_serialized_fields: ClassVar[tuple[str, ...]] = (
        *BaseSensorOperator.extra_serialized_fields,
        "delta",
        "end_from_trigger",
    )

    def __init__(
        self,
        *,
        delta: timedelta,
        deferrable: bool = False,
        end_from_trigger: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.delta = _require_timedelta(delta, "delta", type(self).__name__)
        self.deferrable = deferrable
        self.end_from_trigger = end_from_trigger

    def _target(self, context: Any) -> Any:
        base = context.get("data_interval_end") or context["dag_run"].run_after
        return timezone.convert_to_utc(base + self.delta)

    def poke(self, context: Any) -> bool:
        target = self._target(context)
        self.log.info("Checking if the delta has elapsed; target time is %s", target)
        return timezone.utcnow() > target

    def execute(self, context: Any) -> Any:
        """Poke (``deferrable=False``), or, as Airflow's, succeed at once if the target time has passed and
        else defer to a ``DateTimeTrigger`` at it, with the sensor's ``timeout``."""
        if not self.deferrable:
            return super().execute(context)
        target = self._target(context)
        if timezone.utcnow() > target:
            return True
        try:
            trigger = DateTimeTrigger(moment=target, end_from_trigger=self.end_from_trigger)
        except (TypeError, ValueError) as exc:
            if self.soft_fail:
                raise AirflowSkipException("Skipping due to soft_fail is set to True.") from exc
            raise
        self.defer(trigger=trigger, method_name="execute_complete", timeout=self.timeout)

    def execute_complete(self, context: Any, event: Any = None) -> None:
        """The trigger fired: the delta has elapsed."""
        return None


class TimeDeltaSensorAsync(TimeDeltaSensor):
    """Deprecated in Airflow 3 in favour of ``TimeDeltaSensor(deferrable=True)``; kept so old files parse."""

    def __init__(self, *, end_from_trigger: bool = False, delta: timedelta, **kwargs: Any) -> None:
        warnings.warn(
            "TimeDeltaSensorAsync is deprecated and will be removed in a future version. "
            "Use `TimeDeltaSensor` with `deferrable=True` instead.",
            DeprecationWarning,
            stacklevel=2,
        )
        super().__init__(delta=delta, deferrable=True, end_from_trigger=end_from_trigger, **kwargs)


class WaitSensor(BaseSensorOperator):
    """Waits ``time_to_wait`` from the moment the task starts (an int is minutes, as in Airflow)."""

    extra_serialized_fields: ClassVar[tuple[str, ...]] = (
        *BaseSensorOperator.extra_serialized_fields,
        "time_to_wait",
    )

    def __init__(self, time_to_wait: timedelta | int, deferrable: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.deferrable = deferrable
        if isinstance(time_to_wait, int) and not isinstance(time_to_wait, bool):
            time_to_wait = timedelta(minutes=time_to_wait)
        self.time_to_wait = _require_timedelta(time_to_wait, "time_to_wait", type(self).__name__)

    def execute(self, context: Any) -> None:
        """``deferrable=True``: a ``TimeDeltaTrigger`` that ends the task when it fires (Airflow's); else the worker
        sleeps ``time_to_wait``."""
        import time

        if self.deferrable:
            self.defer(trigger=TimeDeltaTrigger(self.time_to_wait, end_from_trigger=True),
                       method_name="execute_complete")
        time.sleep(self.time_to_wait.total_seconds())

    def execute_complete(self, context: Any, event: Any = None) -> None:
        return None
