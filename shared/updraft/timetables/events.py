"""A schedule given as an explicit list of instants, for irregular but known dates (matches, holidays)."""

from __future__ import annotations

import datetime
import itertools
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import pendulum

from updraft.timetables._time import coerce_datetime, utcnow
from updraft.timetables.base import DagRunInfo, DataInterval, SerializedEquality, Timetable

if TYPE_CHECKING:
    from pendulum import DateTime

    from updraft.timetables.base import TimeRestriction

__all__ = ["EventsTimetable"]


class EventsTimetable(SerializedEquality, Timetable):
    """Run once at each listed instant; each run's data interval is that exact instant.

    :param event_dates: the instants; loaded whole, so keep the list finite and reasonably small.
        Naive datetimes are read as UTC, since timetables only ever deal in aware instants.
    :param restrict_to_events: make a manual run use the most recent event (or the first one when all
        are in the future) instead of the trigger time.
    :param presorted: skip sorting because the caller guarantees ascending order.
    :param description: label for the UI; by default "N events between <first> and <last>", with
        "N events" as the summary.
    """

    def __init__(
        self,
        event_dates: Iterable[datetime.datetime],
        restrict_to_events: bool = False,
        presorted: bool = False,
        description: str | None = None,
    ) -> None:
        self.event_dates: list[DateTime] = [coerce_datetime(d) for d in event_dates]
        if not presorted:
            self.event_dates.sort()
        self.restrict_to_events = restrict_to_events
        self._given_description = description
        if description is None:
            if self.event_dates:
                self.description = (
                    f"{len(self.event_dates)} events between {self.event_dates[0]} and {self.event_dates[-1]}"
                )
            else:
                self.description = "No events"
            self._summary = f"{len(self.event_dates)} events"
        else:
            self._summary = description
            self.description = description

    @property
    def summary(self) -> str:
        return self._summary

    def __repr__(self) -> str:
        return self.summary

    def __hash__(self) -> int:
        return hash((type(self), tuple(self.event_dates), self.restrict_to_events))

    def next_dagrun_info(
        self,
        *,
        last_automated_data_interval: DataInterval | None,
        restriction: TimeRestriction,
    ) -> DagRunInfo | None:
        earliest = restriction.earliest
        if not restriction.catchup:
            current_time = utcnow()
            if earliest is None or current_time > earliest:
                earliest = current_time

        for next_event in self.event_dates:
            if earliest and next_event < earliest:
                continue
            if last_automated_data_interval and next_event <= last_automated_data_interval.end:
                continue
            break
        else:
            return None

        if restriction.latest is not None and next_event > restriction.latest:
            return None
        return DagRunInfo.exact(next_event)

    def infer_manual_data_interval(self, *, run_after: DateTime) -> DataInterval:
        if not self.restrict_to_events or not self.event_dates:
            return DataInterval.exact(run_after)
        if run_after < self.event_dates[0]:
            return DataInterval.exact(self.event_dates[0])
        past_events = itertools.dropwhile(lambda when: when > run_after, reversed(self.event_dates))
        return DataInterval.exact(next(past_events))

    def serialize(self) -> dict[str, Any]:
        # The explicit description travels too, so an upgraded scheduler shows the author's label.
        return {
            "event_dates": [x.isoformat(sep="T") for x in self.event_dates],
            "restrict_to_events": self.restrict_to_events,
            "description": self._given_description,
        }

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> Timetable:
        return cls(
            [pendulum.DateTime.fromisoformat(x) for x in data["event_dates"]],
            data["restrict_to_events"],
            presorted=True,
            description=data.get("description"),
        )
