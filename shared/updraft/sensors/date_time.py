"""Sensors that wait for a point in time, from the standard provider's ``sensors.date_time``."""

from __future__ import annotations

import datetime
from typing import Any, ClassVar

from updraft.sensors.base import BaseSensorOperator


def _target_time(value: Any) -> Any:
    """Keep ``target_time`` a string, as Airflow does, because it is a template field rendered later.

    XComArgs are resolved at run time and pass through; any other type is Airflow's TypeError, raised now.
    """
    from updraft.sdk.xcom_arg import XComArg

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
        from updraft.sdk import timezone

        target = self.target_time
        target = timezone.parse(target) if isinstance(target, str) else timezone.convert_to_utc(target)
        self.log.info("Checking if the time (%s) has come", target)
        return timezone.utcnow() > target


class DateTimeSensorAsync(DateTimeSensor):
    """The deferrable DateTimeSensor: the wait runs as a Step Functions timer, never holding a worker."""

    deferrable: bool = True
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
