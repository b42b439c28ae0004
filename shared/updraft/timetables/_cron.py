"""Cron arithmetic with timezone and DST handling, shared by cron data-interval and cron-trigger schedules.

croniter only understands naive wall-clock times, so every step converts the instant to the timetable's
own timezone, lets croniter walk the wall clock, and converts back. Two DST details follow Airflow's
``_cron.py`` exactly, because users compare run times with Airflow's:

* a wall-clock time skipped when clocks go forward lands after the gap, and an ambiguous one when clocks
  go back resolves to its second occurrence (``make_aware`` with ``fold=1``);
* schedules that fire at least hourly advance by the wall-clock distance croniter computed, added to the
  aware instant, so the repeated hour after clocks go back is scheduled instead of skipped.
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

from croniter import CroniterError, croniter

# The table DAG files know as ``airflow.utils.dates.cron_presets``, as Airflow 2's _cron.py imported it.
from updraft.sdk.dates import cron_presets
from updraft.timetables._cron_description import describe_cron
from updraft.timetables._time import (
    coerce_datetime,
    coerce_timezone,
    convert_to_utc,
    encode_timezone,
    make_aware,
    make_naive,
)
from updraft.timetables.base import AirflowTimetableInvalid, SerializedEquality

if TYPE_CHECKING:
    from pendulum import DateTime, FixedTimezone, Timezone

__all__ = ["CronMixin", "cron_presets"]


def _covers_every_hour(cron: croniter) -> bool:
    # croniter normalizes an every-hour field to ["*"]; only such schedules get the fold-hour treatment.
    return cron.expanded[1] == ["*"]


def _description_for(expression: str) -> str:
    try:
        # Airflow leaves six- and seven-field (seconds/year) expressions undescribed.
        if len(croniter(expression).expanded) > 5:
            return ""
        return describe_cron(expression)
    except (CroniterError, ValueError):
        return ""


class CronMixin(SerializedEquality):
    """Holds a cron expression and the timezone it is read in."""

    description: str = ""

    def __init__(self, cron: str, timezone: str | Timezone | FixedTimezone) -> None:
        self._expression = cron_presets.get(cron, cron)
        self._timezone = coerce_timezone(timezone)
        self.description = _description_for(self._expression)

    @property
    def expression(self) -> str:
        return self._expression

    @property
    def timezone(self) -> Timezone | FixedTimezone:
        return self._timezone

    def __hash__(self) -> int:
        return hash((type(self), self._expression, encode_timezone(self._timezone)))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._expression!r}, {encode_timezone(self._timezone)!r})"

    @property
    def summary(self) -> str:
        return self._expression

    def validate(self) -> None:
        try:
            croniter(self._expression)
        except (CroniterError, ValueError, TypeError) as exc:
            raise AirflowTimetableInvalid(f"Invalid cron expression {self._expression!r}: {exc}") from exc

    def _get_next(self, current: DateTime) -> DateTime:
        """First schedule strictly after *current*, in UTC."""
        current = coerce_datetime(current)
        naive = make_naive(current, self._timezone)
        cron = croniter(self._expression, start_time=naive)
        scheduled = cron.get_next(datetime.datetime)
        if not _covers_every_hour(cron):
            return convert_to_utc(make_aware(scheduled, self._timezone))
        delta = scheduled - naive
        return convert_to_utc(current.in_timezone(self._timezone) + delta)

    def _get_prev(self, current: DateTime) -> DateTime:
        """Last schedule strictly before *current*, in UTC."""
        current = coerce_datetime(current)
        naive = make_naive(current, self._timezone)
        cron = croniter(self._expression, start_time=naive)
        scheduled = cron.get_prev(datetime.datetime)
        if not _covers_every_hour(cron):
            return convert_to_utc(make_aware(scheduled, self._timezone))
        delta = naive - scheduled
        return convert_to_utc(current.in_timezone(self._timezone) - delta)

    def _align_to_next(self, current: DateTime) -> DateTime:
        """*current* if it is a schedule point, else the next one."""
        next_time = self._get_next(current)
        if self._get_prev(next_time) != current:
            return next_time
        return current

    def _align_to_prev(self, current: DateTime) -> DateTime:
        """*current* if it is a schedule point, else the previous one."""
        prev_time = self._get_prev(current)
        if self._get_next(prev_time) != current:
            return prev_time
        return current

    def _cron_fields(self) -> dict[str, Any]:
        return {"expression": self._expression, "timezone": encode_timezone(self._timezone)}
