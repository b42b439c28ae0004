"""Turn a DAG's ``schedule=`` argument into a timetable, exactly as Airflow 3 does.

Airflow 3 changed the meaning of a plain cron string: it now builds a :class:`CronTriggerTimetable`
(runs at the cron time, zero-length data interval) rather than Airflow 2's data-interval timetable, and
``timedelta`` schedules likewise become :class:`DeltaTriggerTimetable`. The per-environment switch
``create_cron_data_intervals`` (Airflow's ``[scheduler] create_cron_data_intervals``) restores the old
data-interval classes for both.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from typing import Any

from dateutil.relativedelta import relativedelta

from updraft.timetables._time import coerce_timezone
from updraft.timetables.base import Timetable
from updraft.timetables.interval import CronDataIntervalTimetable, DeltaDataIntervalTimetable
from updraft.timetables.simple import (
    AssetTriggeredTimetable,
    ContinuousTimetable,
    NullTimetable,
    OnceTimetable,
    is_asset_like,
)
from updraft.timetables.trigger import CronTriggerTimetable, DeltaTriggerTimetable

__all__ = ["InvalidSchedule", "create_timetable"]


class InvalidSchedule(TypeError, ValueError):
    """``schedule=`` holds something no timetable can be built from.

    Airflow raises ``ValueError`` here; deriving from both lets code written against either catch it.
    """


def create_timetable(
    schedule: Any,
    timezone: Any = None,
    *,
    create_cron_data_intervals: bool = False,
) -> Timetable:
    """Build the timetable for *schedule*, reading cron strings in *timezone* (the DAG's; default UTC).

    Accepted values, checked in Airflow's order: a timetable instance (used as-is); an asset, alias or
    asset condition; a non-string collection of those (all must be assets: they become an "all of"
    condition); ``None``; ``"@once"``; ``"@continuous"``; a ``timedelta``/``relativedelta``; a cron
    expression or preset.
    """
    if isinstance(schedule, Timetable):
        return schedule
    if schedule is not None and not isinstance(schedule, str) and is_asset_like(schedule):
        return AssetTriggeredTimetable(schedule)
    if isinstance(schedule, Iterable) and not isinstance(schedule, str | bytes | dict):
        members = list(schedule)
        if not all(is_asset_like(x) for x in members):
            raise InvalidSchedule(
                "All elements in 'schedule' should be either assets, asset references, or asset aliases"
            )
        return AssetTriggeredTimetable(members)

    if schedule is None:
        return NullTimetable()
    if schedule == "@once":
        return OnceTimetable()
    if schedule == "@continuous":
        return ContinuousTimetable()
    if isinstance(schedule, datetime.timedelta | relativedelta):
        if create_cron_data_intervals:
            return DeltaDataIntervalTimetable(schedule)
        return DeltaTriggerTimetable(schedule)
    if isinstance(schedule, str):
        tz = coerce_timezone(timezone)
        if create_cron_data_intervals:
            return CronDataIntervalTimetable(schedule, tz)
        return CronTriggerTimetable(schedule, timezone=tz)
    raise InvalidSchedule(f"{schedule!r} is not a valid schedule.")
