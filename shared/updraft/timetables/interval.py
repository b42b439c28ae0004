"""Data-interval schedules: each run covers one whole period and starts when that period ends.

This is Airflow 2's meaning of ``schedule="0 0 * * *"`` (and of ``timedelta`` schedules); Airflow 3 only
builds these when ``[scheduler] create_cron_data_intervals`` is on, or when a DAG asks for them by class.
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

import pendulum

from updraft.timetables._cron import CronMixin
from updraft.timetables._delta import Delta, DeltaMixin, decode_interval, encode_interval
from updraft.timetables._time import decode_timezone, utcnow
from updraft.timetables.base import DagRunInfo, DataInterval, GridTimetable, Timetable

if TYPE_CHECKING:
    from dateutil.relativedelta import relativedelta
    from pendulum import DateTime

    from updraft.timetables.base import TimeRestriction

__all__ = ["CronDataIntervalTimetable", "DeltaDataIntervalTimetable"]


class _DataIntervalTimetable(GridTimetable):
    """Scheduling shared by cron and delta data intervals; subclasses supply the period arithmetic."""

    def _skip_to_latest(self, earliest: DateTime | None) -> DateTime:
        """Earliest data-interval start allowed when ``catchup=False`` (the latest complete period)."""
        raise NotImplementedError()

    def next_dagrun_info(
        self,
        *,
        last_automated_data_interval: DataInterval | None,
        restriction: TimeRestriction,
    ) -> DagRunInfo | None:
        earliest = restriction.earliest
        if not restriction.catchup:
            earliest = self._skip_to_latest(earliest)
        elif earliest is not None:
            earliest = self._align_to_next(earliest)
        if last_automated_data_interval is None:
            # First run: the first period starting at or after the (aligned) start date.
            if earliest is None:
                return None
            start = earliest
        else:
            # Re-aligning the previous end lets a DAG whose schedule changed snap onto the new one.
            aligned_last_end = self._align_to_prev(last_automated_data_interval.end)
            start = max(aligned_last_end, earliest) if earliest is not None else aligned_last_end
        if restriction.latest is not None and start > restriction.latest:
            return None
        end = self._get_next(start)
        return DagRunInfo.interval(start=start, end=end)


class CronDataIntervalTimetable(CronMixin, _DataIntervalTimetable):
    """Data intervals between consecutive cron fire times, in the cron's timezone.

    ``@once`` is not a cron expression here; it is :class:`~updraft.timetables.simple.OnceTimetable`.
    """

    def __init__(self, cron: str, timezone: Any) -> None:
        super().__init__(cron, timezone)

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> Timetable:
        return cls(data["expression"], decode_timezone(data["timezone"]))

    def serialize(self) -> dict[str, Any]:
        return self._cron_fields()

    def _skip_to_latest(self, earliest: DateTime | None) -> DateTime:
        # The newest period that has already ended; when "now" sits exactly on a boundary the period
        # starting now has not ended yet, so the one before it is the latest complete period.
        current_time = utcnow()
        last_start = self._get_prev(current_time)
        next_start = self._get_next(last_start)
        if next_start == current_time:
            new_start = last_start
        elif next_start > current_time:
            new_start = self._get_prev(last_start)
        else:
            raise AssertionError("next schedule shouldn't be earlier")
        if earliest is None:
            return new_start
        return max(new_start, self._align_to_next(earliest))

    def infer_manual_data_interval(self, *, run_after: DateTime) -> DataInterval:
        # The last complete period before the trigger: triggered at 01:00 on the 25th, a daily
        # schedule covers 00:00 on the 24th to 00:00 on the 25th.
        end = self._align_to_prev(run_after)
        return DataInterval(start=self._get_prev(end), end=end)


class DeltaDataIntervalTimetable(DeltaMixin, _DataIntervalTimetable):
    """Back-to-back data intervals of a fixed ``timedelta``/``relativedelta`` length."""

    def __init__(self, delta: Delta) -> None:
        super().__init__(delta)

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> Timetable:
        return cls(decode_interval(data["delta"]))

    def serialize(self) -> dict[str, Any]:
        return {"delta": encode_interval(self._delta)}

    @staticmethod
    def _relativedelta_in_seconds(delta: relativedelta) -> int:
        # Airflow's approximation (365-day years, 30-day months) for rounding "now" onto the grid.
        return (
            delta.years * 365 * 24 * 60 * 60
            + delta.months * 30 * 24 * 60 * 60
            + delta.days * 24 * 60 * 60
            + delta.hours * 60 * 60
            + delta.minutes * 60
            + delta.seconds
        )

    def _round(self, dt: DateTime) -> DateTime:
        """Floor *dt* onto the delta grid counted from the Unix epoch."""
        if isinstance(self._delta, datetime.timedelta):
            seconds: float = self._delta.total_seconds()
        else:
            seconds = self._relativedelta_in_seconds(self._delta)
        timestamp = dt.timestamp()
        floored = pendulum.from_timestamp(timestamp - (timestamp % seconds))
        return floored if dt.timezone is None else floored.in_timezone(dt.timezone)

    def _skip_to_latest(self, earliest: DateTime | None) -> DateTime:
        # One period before the grid-rounded "now", so the returned interval has already ended.
        new_start = self._get_prev(self._round(utcnow()))
        if earliest is None:
            return new_start
        return max(new_start, earliest)

    def infer_manual_data_interval(self, *, run_after: DateTime) -> DataInterval:
        return DataInterval(start=self._get_prev(run_after), end=run_after)
