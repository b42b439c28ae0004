"""Clock and timezone plumbing shared by every timetable.

Airflow's timetables read the wall clock (``utcnow()``) when ``catchup=False``; routing every read through
:func:`utcnow` lets the scheduler, ``updraft dags next-execution`` and tests pin "now" with
:func:`frozen_now` instead of patching ``datetime``. The timezone helpers reproduce Airflow's
``airflow._shared.timezones.timezone`` functions call for call, because cron-across-DST results depend on
exactly which pendulum operations are used (notably ``fold=1`` in :func:`make_aware`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import zoneinfo
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

import pendulum
from pendulum import DateTime, FixedTimezone, Timezone

UTC: Timezone = pendulum.UTC

_frozen: ContextVar[DateTime | None] = ContextVar("updraft_timetables_now", default=None)


def utcnow() -> DateTime:
    """Return the current instant in UTC, or the instant pinned by :func:`frozen_now`."""
    pinned = _frozen.get()
    if pinned is not None:
        return pinned
    return pendulum.now(UTC)


@contextlib.contextmanager
def frozen_now(when: dt.datetime) -> Iterator[DateTime]:
    """Pin :func:`utcnow` to *when* for the current context (thread or task) only.

    A context variable rather than a global keeps concurrent scheduler work in one process independent.
    """
    pinned = convert_to_utc(when)
    token = _frozen.set(pinned)
    try:
        yield pinned
    finally:
        _frozen.reset(token)


def coerce_timezone(tz: Any) -> Timezone | FixedTimezone:
    """Turn any reasonable timezone spelling into the pendulum type Airflow serializes.

    Airflow only accepts pendulum timezones; DAG authors also pass ``zoneinfo``/``datetime.timezone``
    objects or names, and rejecting those would break DAG files that work elsewhere.
    """
    if tz is None:
        return UTC
    if isinstance(tz, Timezone | FixedTimezone):
        return tz
    if isinstance(tz, str | int):
        return pendulum.timezone(tz)
    if isinstance(tz, zoneinfo.ZoneInfo):
        return pendulum.timezone(tz.key)
    if isinstance(tz, dt.timezone):
        offset = tz.utcoffset(None)
        seconds = int(offset.total_seconds())
        return UTC if seconds == 0 else pendulum.timezone(seconds)
    name = getattr(tz, "zone", None) or getattr(tz, "key", None)  # pytz, dateutil
    if isinstance(name, str):
        return pendulum.timezone(name)
    raise TypeError(f"Timezone should be a pendulum timezone or an IANA name, not {tz!r}")


def encode_timezone(tz: Any) -> str | int:
    """Serialize a timezone the way Airflow's ``encode_timezone`` does (UTC special-cased)."""
    if isinstance(tz, str):
        return tz
    zone = coerce_timezone(tz)
    if isinstance(zone, FixedTimezone):
        return "UTC" if zone.offset == 0 else zone.offset
    return zone.name


def decode_timezone(value: str | int) -> Timezone | FixedTimezone:
    return pendulum.timezone(value)


def make_naive(value: dt.datetime, timezone: dt.tzinfo) -> dt.datetime:
    """Wall-clock reading of an aware instant in *timezone*, as a plain naive datetime (croniter input)."""
    if value.utcoffset() is None:
        raise ValueError("make_naive() cannot be applied to a naive datetime")
    local = value.astimezone(timezone)
    return dt.datetime(local.year, local.month, local.day, local.hour, local.minute, local.second, local.microsecond)


def make_aware(value: dt.datetime, timezone: dt.tzinfo) -> dt.datetime:
    """Attach *timezone* to a naive wall-clock time.

    ``fold=1`` picks the second occurrence of an ambiguous time when clocks go back, and pendulum's
    ``convert`` moves a non-existent time (clocks going forward) past the gap, both as Airflow does.
    """
    if value.utcoffset() is not None:
        raise ValueError(f"make_aware expects a naive datetime, got {value}")
    value = value.replace(fold=1)
    if isinstance(timezone, Timezone | FixedTimezone):
        return timezone.convert(value)
    return value.replace(tzinfo=timezone)


def convert_to_utc(value: dt.datetime) -> DateTime:
    """Aware pendulum instant in UTC; naive input is read as UTC (Airflow's default timezone)."""
    if value.utcoffset() is None:
        value = pendulum.instance(value, UTC)
    return pendulum.instance(value.astimezone(UTC))


def coerce_datetime(value: dt.datetime, tz: dt.tzinfo | None = None) -> DateTime:
    """Pendulum DateTime keeping an aware value's own tzinfo; naive values get *tz* (default UTC)."""
    if isinstance(value, DateTime) and value.tzinfo is not None:
        return value
    if value.tzinfo is None:
        value = make_aware(value, tz or UTC)
    return pendulum.instance(value)
