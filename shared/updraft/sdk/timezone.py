"""Aware datetimes everywhere: naive values from DAG files are read in the default timezone (UTC), as Airflow."""

from __future__ import annotations

import contextlib
import contextvars
import datetime as dt
import time
from collections.abc import Callable, Iterator
from typing import overload

import pendulum

utc = pendulum.UTC
TIMEZONE = utc


def is_naive(value: dt.datetime) -> bool:
    return value.tzinfo is None or value.tzinfo.utcoffset(value) is None


def to_aware(value: dt.datetime | dt.date, tz: dt.tzinfo | None = None) -> pendulum.DateTime:
    """A pendulum DateTime; naive input is taken to be in ``tz`` (default UTC), aware input keeps its zone."""
    if not isinstance(value, dt.datetime):
        if isinstance(value, dt.date):
            value = dt.datetime(value.year, value.month, value.day)
        else:
            raise _not_a_datetime(value)
    if is_naive(value):
        # Rebuilt from fields: pendulum.instance() leaves a naive pendulum DateTime naive.
        return pendulum.datetime(value.year, value.month, value.day, value.hour, value.minute, value.second,
                                 value.microsecond, tz=tz or TIMEZONE, fold=value.fold)
    return pendulum.instance(value)


@overload
def convert_to_utc(value: dt.datetime) -> pendulum.DateTime: ...
@overload
def convert_to_utc(value: None) -> None: ...
@overload
def convert_to_utc(value: dt.datetime | None) -> pendulum.DateTime | None: ...
def convert_to_utc(value: dt.datetime | None) -> pendulum.DateTime | None:
    if value is None:
        return None
    return to_aware(value).in_timezone(utc)


def make_aware(value: dt.datetime, timezone: dt.tzinfo | None = None) -> pendulum.DateTime:
    if not is_naive(value):
        raise ValueError(f"make_aware expects a naive datetime, got {value}")
    return to_aware(value, timezone)


def make_naive(value: dt.datetime, timezone: dt.tzinfo | None = None) -> dt.datetime:
    if is_naive(value):
        raise ValueError("make_naive() cannot be applied to a naive datetime")
    return value.astimezone(timezone or utc).replace(tzinfo=None)


@overload
def coerce_datetime(value: dt.datetime, tz: dt.tzinfo | None = None) -> pendulum.DateTime: ...
@overload
def coerce_datetime(value: None, tz: dt.tzinfo | None = None) -> None: ...
def coerce_datetime(value: dt.datetime | None, tz: dt.tzinfo | None = None) -> pendulum.DateTime | None:
    """Airflow's ``timezone.coerce_datetime``: an aware pendulum DateTime; naive input is read in ``tz``."""
    if value is None:
        return None
    return to_aware(value, tz)


# The clock of the try running in this thread (``try_clock``), so a sensor's timeout and reschedule dates follow
# the environment's clock (a test's fake clock, ``dags test`` skipping a wait) rather than the wall clock.
_clock: contextvars.ContextVar[Callable[[], dt.datetime] | None] = contextvars.ContextVar("updraft_clock",
                                                                                         default=None)


def utcnow() -> pendulum.DateTime:
    clock = _clock.get()
    return pendulum.now(utc) if clock is None else convert_to_utc(clock())


@contextlib.contextmanager
def try_clock(now_fn: Callable[[], dt.datetime]) -> Iterator[None]:
    """In this block ``utcnow()`` is ``now_fn()`` at its start plus the real time elapsed since: a try starts at
    its environment's time and then runs in real time, even when the environment's clock stands still (a test's
    fake clock) or jumps (``dags test``). The runtime sets it around a try; on AWS it is the wall clock."""
    start, started = now_fn(), time.monotonic()
    token = _clock.set(lambda: start + dt.timedelta(seconds=time.monotonic() - started))
    try:
        yield
    finally:
        _clock.reset(token)


def datetime(*args, **kwargs) -> pendulum.DateTime:
    """``datetime(...)`` that defaults to the default timezone, like ``airflow.utils.timezone.datetime``."""
    kwargs.setdefault("tzinfo", TIMEZONE)
    return pendulum.instance(dt.datetime(*args, **kwargs))


def parse(value: str, timezone: dt.tzinfo | None = None) -> pendulum.DateTime:
    parsed = pendulum.parse(value, tz=timezone or TIMEZONE, strict=False)
    if isinstance(parsed, (pendulum.Time, pendulum.Duration)):  # durations ("P1D") and times of day parse too
        raise _not_a_datetime(parsed)
    return to_aware(parsed)


def _not_a_datetime(value: object) -> TypeError:
    return TypeError(f"expected a datetime, got {type(value).__name__}: {value!r}")


def timezone_name(tz: dt.tzinfo) -> str:
    """A name that survives serialization (``Europe/Berlin``, ``UTC`` or a fixed ``+01:00`` offset)."""
    name = getattr(tz, "name", None) or getattr(tz, "key", None)
    if name:
        return "UTC" if name in ("UTC", "Etc/UTC", "+00:00") else name
    offset = tz.utcoffset(None)
    if not offset:
        return "UTC"
    return pendulum.fixed_timezone(int(offset.total_seconds())).name
