"""How the store writes and reads instants (``store.attributes``): fixed-width UTC text, read back exactly."""

from __future__ import annotations

import datetime as dt

import pendulum
import pytest

from updraft.store.attributes import parse_ts, ts


@pytest.mark.parametrize("instant", [
    dt.datetime(2026, 12, 5, 5, 43, 56, 187213, tzinfo=dt.UTC),
    dt.datetime(2024, 2, 29, 23, 59, 59, 999999, tzinfo=dt.UTC),  # a leap day's last microsecond
    dt.datetime(2024, 1, 1, tzinfo=dt.UTC),  # no microseconds: still written with six digits
    pendulum.datetime(2024, 3, 31, 2, 30, tz="Europe/Paris"),  # another zone: stored as UTC
    dt.datetime(9999, 12, 31, 23, 59, 59, tzinfo=dt.UTC),
    dt.datetime(2024, 6, 1, 12),  # naive: taken as UTC
])
def test_an_instant_reads_back_as_the_same_utc_pendulum_datetime(instant: dt.datetime):
    expected = instant if instant.tzinfo is not None else instant.replace(tzinfo=dt.UTC)
    read = parse_ts(ts(instant))
    assert type(read) is pendulum.DateTime and read.tzinfo == pendulum.UTC and read.utcoffset() == dt.timedelta(0)
    assert read == expected and read.microsecond == expected.microsecond
    assert read.timezone_name == "UTC"


@pytest.mark.parametrize("text", [
    "2024-01-01 00:00:00.000000+0000",  # not ts()'s separator
    "2024-01-01T00:00:00.000000+0100",  # not UTC
    "2024-01-01T00:00:00+0000",  # no microseconds
    "2024-01-01T00:00:00.000000Z",
    "2024-13-01T00:00:00.000000+0000",  # ts()'s shape, no such month
    "2024-01-01T00:00:00,000000+0000",  # a decimal comma, which fromisoformat alone would take
    "not a date at all",
])
def test_text_ts_never_writes_is_refused(text: str):
    with pytest.raises(ValueError):
        parse_ts(text)
