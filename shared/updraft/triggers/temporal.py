"""``airflow.providers.standard.triggers.temporal``: the time triggers, Updraft's pure waits.

They serialize exactly as Airflow's (``TimeDeltaTrigger`` as a ``DateTimeTrigger`` at its moment), and a deferred
try waiting on one costs no compute: its Step Functions execution is a Wait state to ``moment``.
"""

from __future__ import annotations

import asyncio
import datetime
from collections.abc import AsyncIterator
from typing import Any

import pendulum

from updraft.triggers.base import BaseTrigger, StartTriggerArgs, TaskSuccessEvent, TriggerEvent

CLASSPATH = "airflow.providers.standard.triggers.temporal.DateTimeTrigger"
# What a sensor waiting for a moment declares it starts from (Airflow's DateTimeSensorAsync and TimeSensor): its
# __init__ replaces it with the moment, never mutates it, so one instance serves every such sensor class.
START_AT_MOMENT = StartTriggerArgs(trigger_cls=CLASSPATH, trigger_kwargs={"moment": "", "end_from_trigger": False},
                                   next_method="execute_complete", next_kwargs=None, timeout=None)


def _utc(value: datetime.datetime) -> pendulum.DateTime:
    return pendulum.instance(value).in_timezone("UTC")


class DateTimeTrigger(BaseTrigger):
    """Fires at ``moment`` (or at ``target_time``, a string or datetime parsed when first needed)."""

    def __init__(self, moment: datetime.datetime | None = None, *,
                 target_time: datetime.datetime | str | None = None, end_from_trigger: bool = False) -> None:
        super().__init__()
        if (moment is None) == (target_time is None):
            raise TypeError("DateTimeTrigger requires exactly one of 'moment' or 'target_time'")
        self.target_time = target_time
        self._moment: pendulum.DateTime | None = None
        if moment is not None:
            if not isinstance(moment, datetime.datetime):
                raise TypeError(f"Expected datetime.datetime type for moment. Got {type(moment)}")
            if moment.tzinfo is None:
                raise ValueError("You cannot pass naive datetimes")
            self._moment = _utc(moment)
        self.end_from_trigger = end_from_trigger

    @property
    def moment(self) -> pendulum.DateTime:
        if self._moment is None:
            target: Any = self.target_time
            if isinstance(target, datetime.datetime):
                target = target.isoformat()
            if not isinstance(target, str) or not target:
                raise TypeError("DateTimeTrigger has neither a 'moment' nor a usable 'target_time'")
            parsed = pendulum.parse(target)
            if not isinstance(parsed, datetime.datetime):
                raise TypeError(f"DateTimeTrigger target_time {target!r} is not a date and time")
            self._moment = _utc(parsed)
        return self._moment

    def serialize(self) -> tuple[str, dict[str, Any]]:
        kwargs: dict[str, Any] = ({"target_time": self.target_time} if self._moment is None
                                  else {"moment": self._moment})
        kwargs["end_from_trigger"] = self.end_from_trigger
        return (CLASSPATH, kwargs)

    async def run(self) -> AsyncIterator[TriggerEvent]:
        """Airflow's loop, for running the trigger outside Updraft (Updraft waits in a Wait state instead)."""
        while self.moment > pendulum.now("UTC"):
            await asyncio.sleep(min(max((self.moment - pendulum.now("UTC")).total_seconds(), 0.0), 60.0))
        yield TaskSuccessEvent() if self.end_from_trigger else TriggerEvent(self.moment)


class TimeDeltaTrigger(DateTimeTrigger):
    """A DateTimeTrigger ``delta`` from now (it serializes as one, as in Airflow)."""

    def __init__(self, delta: datetime.timedelta, *, end_from_trigger: bool = False) -> None:
        super().__init__(moment=pendulum.now("UTC") + delta, end_from_trigger=end_from_trigger)
