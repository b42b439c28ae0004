"""How the store writes instants: fixed-width UTC text, so string order is time order (index sort keys)."""

from __future__ import annotations

import datetime as dt
import re

import pendulum
from pynamodb.attributes import Attribute
from pynamodb.constants import STRING

_FORMAT = "%Y-%m-%dT%H:%M:%S.%f+0000"
_SHAPE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}\+0000")  # what ts() writes (a four-digit year)


def ts(value: dt.datetime) -> str:
    """The stored form of an instant: UTC, fixed width, so string order is time order (index sort keys).

    Naive datetimes are taken as UTC, as Airflow does for values it stores.
    """
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    return value.astimezone(dt.UTC).strftime(_FORMAT)


def parse_ts(text: str) -> pendulum.DateTime:
    """The instant :func:`ts` wrote, as a pendulum UTC DateTime; text of any other shape raises ValueError.

    Every item read parses a few (a task instance up to six): text of :func:`ts`'s fixed shape goes through
    ``fromisoformat`` and pendulum's constructor (~0.7 us), not ``strptime`` and ``pendulum.instance`` (~10 us);
    anything else through ``strptime``, whose format refuses it."""
    parsed = dt.datetime.fromisoformat(text) if _SHAPE.fullmatch(text) else dt.datetime.strptime(text, _FORMAT)
    return pendulum.DateTime(parsed.year, parsed.month, parsed.day, parsed.hour, parsed.minute, parsed.second,
                             parsed.microsecond, tzinfo=pendulum.UTC)


class DateTimeAttribute(Attribute[dt.datetime]):
    """An aware instant stored as :func:`ts` text; read back as a pendulum UTC DateTime.

    pendulum because timetables (which take these values back as ``last_automated_data_interval``) do
    calendar arithmetic that plain datetimes do not support.
    """

    attr_type = STRING

    def serialize(self, value: dt.datetime) -> str:
        return ts(value)

    def deserialize(self, value: str) -> dt.datetime:
        return parse_ts(value)
