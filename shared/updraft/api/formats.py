"""How values look on the wire: Airflow's datetimes, durations, ``*_pattern`` matching, and JSON or text by the
request's ``Accept``."""

from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING, overload

from updraft.api.errors import NotAcceptable

if TYPE_CHECKING:
    from updraft.api.models import TimeDelta


@overload
def iso(value: dt.datetime) -> str: ...
@overload
def iso(value: dt.datetime | None) -> str | None: ...
def iso(value: dt.datetime | None) -> str | None:
    """UTC with a ``Z``, as Airflow's API (pydantic) writes aware datetimes; naive ones are taken as UTC."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


def parse_datetime(text: str) -> dt.datetime | None:
    """An ISO 8601 datetime as clients send it (``Z``, ``+00:00`` or the client's ``+0000``); None if it is not
    one. A date alone is midnight, as pydantic reads it. Naive results stay naive: callers decide."""
    try:
        return dt.datetime.fromisoformat(text.strip())
    except ValueError:
        return None


def seconds_between(start: dt.datetime | None, end: dt.datetime | None) -> float | None:
    return (end - start).total_seconds() if start is not None and end is not None else None


def iso_duration(value: dt.timedelta | None) -> str | None:
    """A timedelta as pydantic writes it (``P1DT3600S`` style ISO 8601), for fields typed ``duration``."""
    if value is None:
        return None
    sign = "-" if value < dt.timedelta(0) else ""
    value = abs(value)
    seconds = f"{value.seconds + value.microseconds / 1_000_000:.6f}".rstrip("0").rstrip(".")
    return f"{sign}P{value.days}DT{seconds}S"


def time_delta(value: dt.timedelta | None) -> TimeDelta | None:
    """Airflow's ``TimeDelta`` object (task ``execution_timeout``, ``retry_delay``)."""
    if value is None:
        return None
    return {"__type": "TimeDelta", "days": value.days, "seconds": value.seconds, "microseconds": value.microseconds}


def pattern_matcher(pattern: str | None):
    """Airflow's ``*_pattern`` filters: a case-insensitive substring match where ``%`` and ``_`` are SQL LIKE
    wildcards, ``|`` separates alternatives and ``~`` (or nothing) matches everything."""
    if pattern is None or pattern in ("", "~"):
        return lambda _value: True
    alternatives = []
    for part in pattern.split("|"):
        body = "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in part)
        alternatives.append(body)
    regex = re.compile("|".join(f"(?:{a})" for a in alternatives), re.IGNORECASE | re.DOTALL)
    return lambda value: value is not None and regex.search(value) is not None


JSON, TEXT, ANY = "application/json", "text/plain", "*/*"


def json_or_text(accept: str | None) -> str:
    """Airflow's ``HeaderAcceptJsonOrText``: no header, any or JSON -> JSON; text -> text; else a 406."""
    for mimetype in (ANY, JSON, TEXT):
        if (accept or ANY).startswith(mimetype):
            return JSON if mimetype == ANY else mimetype
    raise NotAcceptable("Only application/json or text/plain is supported")
