"""Sensors that wait for a point in time, from the standard provider's ``sensors.date_time``."""

from __future__ import annotations

import dataclasses
import datetime
from typing import Any, ClassVar, NoReturn

from updraft.sdk import timezone
from updraft.sdk.xcom_arg import XComArg
from updraft.sensors.base import BaseSensorOperator
from updraft.triggers.temporal import START_AT_MOMENT, DateTimeTrigger


def _target_time(value: Any) -> Any:
    """Keep ``target_time`` a string, as Airflow does, because it is a template field rendered later.

    XComArgs are resolved at run time and pass through; any other type is Airflow's TypeError, raised now.
    """
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    if isinstance(value, (str, XComArg)):
        return value
    raise TypeError(f"Expected str or datetime.datetime type for target_time. Got {type(value)}")


class DateTimeSensor(BaseSensorOperator):
    """Waits until ``target_time`` (templated, e.g. ``"{{ data_interval_end.add(hours=1) }}"``) has passed."""

    template_fields: ClassVar[tuple[str, ...]] = ("target_time",)

    def __init__(self, *, target_time: str | datetime.datetime, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.target_time = _target_time(target_time)

    def poke(self, context: Any) -> bool:
        target = self.target_time
        target = timezone.parse(target) if isinstance(target, str) else timezone.convert_to_utc(target)
        self.log.info("Checking if the time (%s) has come", target)
        return timezone.utcnow() > target


class DateTimeSensorAsync(DateTimeSensor):
    """The deferrable DateTimeSensor: the wait runs as a Step Functions timer, never holding a worker.

    As Airflow's, it defers at once to a ``DateTimeTrigger`` at ``target_time`` (``end_from_trigger``: the task
    ends as success when it fires, no worker resumes it). ``start_from_trigger=True`` defers before ``execute``
    runs at all, with ``target_time`` rendered (``runtime.deferral.start_trigger``).
    """

    deferrable: bool = True
    start_trigger_args = START_AT_MOMENT
    extra_serialized_fields: ClassVar[tuple[str, ...]] = (
        *DateTimeSensor.extra_serialized_fields,
        "start_from_trigger",
        "end_from_trigger",
    )

    def __init__(
        self,
        *,
        start_from_trigger: bool = False,
        end_from_trigger: bool = False,
        trigger_kwargs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.end_from_trigger = end_from_trigger
        self.start_from_trigger = start_from_trigger
        self.trigger_kwargs = trigger_kwargs
        if start_from_trigger:
            self.start_trigger_args = dataclasses.replace(
                self.start_trigger_args,
                trigger_kwargs={"target_time": self.target_time, "end_from_trigger": self.end_from_trigger})

    def execute(self, context: Any) -> NoReturn:
        self.defer(method_name="execute_complete",
                   trigger=DateTimeTrigger(target_time=self.target_time, end_from_trigger=self.end_from_trigger))

    def execute_complete(self, context: Any, event: Any = None) -> None:
        """The trigger fired: the time has come."""
        return None
