"""``TimeSensor`` from the standard provider's ``sensors.time``: waits until a time of day, as Airflow's.

The target is today's ``target_time`` in the DAG's timezone, fixed when the operator is made (Airflow's rule:
the day is the one the file is parsed on, so a worker running the try the next day waits for that day's time).
Poke mode compares the clock with it; ``deferrable=True`` defers to a ``DateTimeTrigger`` at it (a Step Functions
timer); ``start_from_trigger=True`` defers before ``execute`` runs (``runtime.deferral.start_trigger``).
"""

from __future__ import annotations

import dataclasses
import datetime
import warnings
from typing import Any, ClassVar, NoReturn

from updraft.sdk import timezone
from updraft.sensors.base import BaseSensorOperator
from updraft.triggers.temporal import START_AT_MOMENT, DateTimeTrigger


class TimeSensor(BaseSensorOperator):
    """Waits until ``target_time`` (a ``datetime.time``) of the day."""

    start_trigger_args = START_AT_MOMENT
    start_from_trigger = False
    extra_serialized_fields: ClassVar[tuple[str, ...]] = (
        *BaseSensorOperator.extra_serialized_fields,
        "start_from_trigger",
        "end_from_trigger",
    )

    def __init__(self, *, target_time: datetime.time, deferrable: bool = False, start_from_trigger: bool = False,
                 end_from_trigger: bool = False, trigger_kwargs: dict[str, Any] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        tz = self.dag.timezone if self.dag is not None else datetime.UTC
        aware = timezone.coerce_datetime(datetime.datetime.combine(datetime.datetime.now(tz), target_time, tz))
        self.target_datetime = timezone.convert_to_utc(aware)
        self.deferrable = deferrable
        self.start_from_trigger = start_from_trigger
        self.end_from_trigger = end_from_trigger
        self.trigger_kwargs = trigger_kwargs
        if start_from_trigger:
            # Replaced, not mutated: start_trigger_args is a class attribute (Airflow's note).
            self.start_trigger_args = dataclasses.replace(
                self.start_trigger_args,
                trigger_kwargs={"moment": self.target_datetime, "end_from_trigger": self.end_from_trigger})

    def execute(self, context: Any) -> Any:
        if self.deferrable:
            self._defer()
        return super().execute(context)

    def _defer(self) -> NoReturn:
        self.defer(trigger=DateTimeTrigger(moment=self.target_datetime, end_from_trigger=self.end_from_trigger),
                   method_name="execute_complete")

    def execute_complete(self, context: Any, event: Any = None) -> None:
        """The trigger fired: the time has come."""
        return None

    def poke(self, context: Any) -> bool:
        self.log.info("Checking if the time (%s) has come", self.target_datetime)
        return timezone.utcnow() > self.target_datetime


class TimeSensorAsync(TimeSensor):
    """Deprecated in Airflow 3 in favour of ``TimeSensor(deferrable=True)``; kept so old files parse."""

    def __init__(self, **kwargs: Any) -> None:
        warnings.warn("TimeSensorAsync is deprecated and will be removed in a future version. Use `TimeSensor` with "
                      "deferrable=True instead.", DeprecationWarning, stacklevel=2)
        super().__init__(deferrable=True, **kwargs)
