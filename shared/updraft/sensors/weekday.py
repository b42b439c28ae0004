"""DayOfWeekSensor: waits until the day of the week is one of ``week_day``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from updraft.sdk import timezone
from updraft.sdk.weekday import WeekDay
from updraft.sensors.base import BaseSensorOperator


class DayOfWeekSensor(BaseSensorOperator):
    """Today (UTC) decides; with ``use_task_logical_date`` the run's logical date (else ``run_after``) does."""

    def __init__(
        self,
        *,
        week_day: str | Iterable[str] | WeekDay | Iterable[WeekDay],
        use_task_logical_date: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.week_day = week_day
        self.use_task_logical_date = use_task_logical_date
        self._week_day_num = WeekDay.validate_week_day(week_day)

    def poke(self, context: Any) -> bool:
        self.log.info("Poking until weekday is in %s, Today is %s", self.week_day,
                      WeekDay(timezone.utcnow().isoweekday()).name)
        if self.use_task_logical_date:
            logical_date = context.get("logical_date")
            dag_run = context.get("dag_run")
            if not (logical_date or (dag_run and dag_run.run_after)):
                raise ValueError(
                    "Either `logical_date` or `run_after` should be provided in the task context when "
                    "`use_task_logical_date` is True"
                )
            day = logical_date.isoweekday() if logical_date else dag_run.run_after.isoweekday()
            return day in self._week_day_num
        return timezone.utcnow().isoweekday() in self._week_day_num
