"""Fixed-delta arithmetic (``timedelta``/``relativedelta``) shared by delta data-interval and trigger schedules.

Unlike cron, a delta schedule has no wall-clock anchor: every instant is a valid boundary, so the
alignment helpers are identities and runs are spaced by adding the delta to UTC instants, as in Airflow.
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

from dateutil.relativedelta import relativedelta, weekday

from updraft.timetables._time import convert_to_utc
from updraft.timetables.base import AirflowTimetableInvalid, SerializedEquality

if TYPE_CHECKING:
    from pendulum import DateTime

__all__ = ["DeltaMixin", "decode_interval", "encode_interval", "encode_relativedelta"]

Delta = datetime.timedelta | relativedelta


def encode_relativedelta(value: relativedelta) -> dict[str, Any]:
    """Airflow's JSON form: the non-zero public fields, with ``weekday`` as ``[day]`` or ``[day, n]``."""
    encoded = {k: v for k, v in vars(value).items() if not k.startswith("_") and v}
    if value.weekday and value.weekday.n:
        encoded["weekday"] = [value.weekday.weekday, value.weekday.n]
    elif value.weekday:
        encoded["weekday"] = [value.weekday.weekday]
    return encoded


def decode_relativedelta(data: dict[str, Any]) -> relativedelta:
    data = dict(data)
    if "weekday" in data:
        data["weekday"] = weekday(*data["weekday"])
    return relativedelta(**data)


def encode_interval(value: Delta) -> float | dict[str, Any]:
    """Seconds as a float for a ``timedelta``, the field dict for a ``relativedelta``."""
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    return encode_relativedelta(value)


def decode_interval(value: float | dict[str, Any]) -> Delta:
    if isinstance(value, dict):
        return decode_relativedelta(value)
    return datetime.timedelta(seconds=value)


class DeltaMixin(SerializedEquality):
    """Holds the delta between runs."""

    def __init__(self, delta: Delta) -> None:
        if not isinstance(delta, datetime.timedelta | relativedelta):
            raise TypeError(f"delta must be a timedelta or relativedelta, not {delta!r}")
        self._delta = delta

    @property
    def delta(self) -> Delta:
        return self._delta

    def __hash__(self) -> int:
        return hash((type(self), repr(encode_interval(self._delta))))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._delta!r})"

    @property
    def summary(self) -> str:
        return str(self._delta)

    def validate(self) -> None:
        now = datetime.datetime.now()
        if (now + self._delta) <= now:
            raise AirflowTimetableInvalid(f"schedule interval must be positive, not {self._delta!r}")

    def _get_next(self, current: DateTime) -> DateTime:
        return convert_to_utc(current + self._delta)

    def _get_prev(self, current: DateTime) -> DateTime:
        return convert_to_utc(current - self._delta)

    def _align_to_next(self, current: DateTime) -> DateTime:
        return current

    def _align_to_prev(self, current: DateTime) -> DateTime:
        return current
