"""Trigger schedules: a run fires at each schedule point, like POSIX cron, with an optional look-back interval.

Airflow 3 builds :class:`CronTriggerTimetable` for ``schedule="<cron>"`` and :class:`DeltaTriggerTimetable`
for ``schedule=timedelta(...)``. The run's data interval is ``[fire time - interval, fire time]``
(zero-length by default), and the logical date is its start.
"""

from __future__ import annotations

import datetime
import math
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from updraft.timetables._cron import CronMixin
from updraft.timetables._delta import Delta, DeltaMixin, decode_interval, encode_interval
from updraft.timetables._time import coerce_datetime, decode_timezone, encode_timezone, utcnow
from updraft.timetables.base import DagRunInfo, DataInterval, GridTimetable, SerializedEquality, Timetable

if TYPE_CHECKING:
    from pendulum import DateTime

    from updraft.timetables.base import TimeRestriction

__all__ = ["CronTriggerTimetable", "DeltaTriggerTimetable", "MultipleCronTriggerTimetable"]


def encode_run_immediately(value: bool | datetime.timedelta | None) -> bool | float | None:
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    return value


def decode_run_immediately(value: bool | float | None) -> bool | datetime.timedelta | None:
    # bool is checked first: True/False are ints, and only non-bool numbers are buffers in seconds.
    if isinstance(value, bool) or value is None:
        return value
    return datetime.timedelta(seconds=value)


class _TriggerTimetable(GridTimetable):
    _interval: Delta

    def infer_manual_data_interval(self, *, run_after: DateTime) -> DataInterval:
        return DataInterval(coerce_datetime(run_after - self._interval), run_after)

    def _calc_first_run(self) -> DateTime:
        """First fire time for a DAG with no start date (``run_immediately`` decides past vs next)."""
        raise NotImplementedError()

    def next_dagrun_info(
        self,
        *,
        last_automated_data_interval: DataInterval | None,
        restriction: TimeRestriction,
    ) -> DagRunInfo | None:
        if restriction.catchup:
            if last_automated_data_interval is not None:
                next_start_time = self._get_next(last_automated_data_interval.end)
            elif restriction.earliest is None:
                next_start_time = self._calc_first_run()
            else:
                next_start_time = self._align_to_next(restriction.earliest)
        else:
            # Without catchup the most recent fire time at or before now is the oldest one allowed.
            candidates = [self._align_to_prev(utcnow())]
            if last_automated_data_interval is not None:
                candidates.append(self._get_next(last_automated_data_interval.end))
            elif restriction.earliest is None:
                # run_immediately only matters for a DAG without a start date.
                candidates.append(self._calc_first_run())
            if restriction.earliest is not None:
                candidates.append(self._align_to_next(restriction.earliest))
            next_start_time = max(candidates)
        if restriction.latest is not None and restriction.latest < next_start_time:
            return None
        return DagRunInfo.interval(coerce_datetime(next_start_time - self._interval), next_start_time)


class DeltaTriggerTimetable(DeltaMixin, _TriggerTimetable):
    """Fire every ``delta``, starting at the DAG's start date, each run looking back ``interval``."""

    def __init__(self, delta: Delta, *, interval: Delta = datetime.timedelta()) -> None:
        super().__init__(delta)
        self._interval = interval

    @property
    def interval(self) -> Delta:
        return self._interval

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> Timetable:
        return cls(decode_interval(data["delta"]), interval=decode_interval(data["interval"]))

    def serialize(self) -> dict[str, Any]:
        return {"delta": encode_interval(self._delta), "interval": encode_interval(self._interval)}

    def _calc_first_run(self) -> DateTime:
        return self._align_to_prev(utcnow())


class CronTriggerTimetable(CronMixin, _TriggerTimetable):
    """Fire at each cron time in ``timezone``; each run looks back ``interval`` (zero by default).

    ``run_immediately`` only matters for a DAG with no start date, to choose its first run:
    True runs the most recent past fire time, False waits for the next one, a ``timedelta`` runs the
    past one if it is at most that old, and None uses 10% of the gap between fire times (at least 5
    minutes) as that buffer.
    """

    def __init__(
        self,
        cron: str,
        timezone: Any = None,
        *,
        interval: Delta = datetime.timedelta(),
        run_immediately: bool | datetime.timedelta | None = False,
    ) -> None:
        if timezone is None:
            raise TypeError("CronTriggerTimetable() missing required argument: 'timezone'")
        super().__init__(cron, timezone)
        self._interval = interval
        self._run_immediately = run_immediately

    @property
    def interval(self) -> Delta:
        return self._interval

    @property
    def run_immediately(self) -> bool | datetime.timedelta | None:
        return self._run_immediately

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self._expression!r}, timezone={encode_timezone(self._timezone)!r}, "
            f"interval={self._interval!r}, run_immediately={self._run_immediately!r})"
        )

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> Timetable:
        return cls(
            data["expression"],
            timezone=decode_timezone(data["timezone"]),
            interval=decode_interval(data["interval"]),
            run_immediately=decode_run_immediately(data.get("run_immediately", False)),
        )

    def serialize(self) -> dict[str, Any]:
        return {
            **self._cron_fields(),
            "interval": encode_interval(self._interval),
            "run_immediately": encode_run_immediately(self._run_immediately),
        }

    def _calc_first_run(self) -> DateTime:
        now = utcnow()
        past_run_time = self._align_to_prev(now)
        next_run_time = self._align_to_next(now)
        if self._run_immediately is True:  # exactly True: a timedelta is truthy too
            return past_run_time
        gap_between_runs = next_run_time - past_run_time
        gap_to_past = now - past_run_time
        if isinstance(self._run_immediately, datetime.timedelta):
            buffer_between_runs = self._run_immediately
        else:
            buffer_between_runs = max(gap_between_runs / 10, datetime.timedelta(minutes=5))
        if gap_to_past <= buffer_between_runs:
            return past_run_time
        return next_run_time


def _sort_key_catchup(info: DagRunInfo | None) -> float:
    # Earliest logical date first; "no run" sorts last.
    if info is None or info.logical_date is None:
        return math.inf
    return info.logical_date.timestamp()


def _sort_key_no_catchup(info: DagRunInfo | None, *, now: float) -> float:
    # Without catchup: the latest run not after now wins (skip as much as possible), else the soonest.
    if info is None or info.logical_date is None:
        return math.inf
    if (ts := info.logical_date.timestamp()) <= now:
        return -ts
    return ts


class MultipleCronTriggerTimetable(SerializedEquality, Timetable):
    """Fire whenever any of several cron expressions fires; simultaneous fire times create one run."""

    def __init__(
        self,
        *crons: str,
        timezone: Any,
        interval: Delta = datetime.timedelta(),
        run_immediately: bool | datetime.timedelta | None = False,
    ) -> None:
        if not crons:
            raise ValueError("cron expression required")
        self._timetables = [
            CronTriggerTimetable(cron, timezone=timezone, interval=interval, run_immediately=run_immediately)
            for cron in crons
        ]
        self.description = ", ".join(t.description for t in self._timetables)

    @property
    def timetables(self) -> list[CronTriggerTimetable]:
        return self._timetables

    def __hash__(self) -> int:
        return hash((type(self), tuple(t.expression for t in self._timetables)))

    def __repr__(self) -> str:
        first = self._timetables[0]
        expressions = ", ".join(repr(t.expression) for t in self._timetables)
        return f"{type(self).__name__}({expressions}, timezone={encode_timezone(first.timezone)!r})"

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> Timetable:
        return cls(
            *data["expressions"],
            timezone=decode_timezone(data["timezone"]),
            interval=decode_interval(data["interval"]),
            run_immediately=decode_run_immediately(data["run_immediately"]),
        )

    def serialize(self) -> dict[str, Any]:
        # The members share timezone, interval and run_immediately; the first one speaks for all.
        first = self._timetables[0]
        return {
            "expressions": [t.expression for t in self._timetables],
            "timezone": encode_timezone(first.timezone),
            "interval": encode_interval(first.interval),
            "run_immediately": encode_run_immediately(first.run_immediately),
        }

    @property
    def summary(self) -> str:
        return ", ".join(t.summary for t in self._timetables)

    def validate(self) -> None:
        for timetable in self._timetables:
            timetable.validate()

    def infer_manual_data_interval(self, *, run_after: DateTime) -> DataInterval:
        intervals = [t.infer_manual_data_interval(run_after=run_after) for t in self._timetables]
        return min(intervals, key=operator.attrgetter("start"))

    def next_dagrun_info(
        self,
        *,
        last_automated_data_interval: DataInterval | None,
        restriction: TimeRestriction,
    ) -> DagRunInfo | None:
        infos = [
            t.next_dagrun_info(last_automated_data_interval=last_automated_data_interval, restriction=restriction)
            for t in self._timetables
        ]
        select_key: Callable[[DagRunInfo | None], float]
        if restriction.catchup:
            select_key = _sort_key_catchup
        else:
            now = utcnow().timestamp()

            def select_key(info: DagRunInfo | None) -> float:
                return _sort_key_no_catchup(info, now=now)

        return min(infos, key=select_key)
