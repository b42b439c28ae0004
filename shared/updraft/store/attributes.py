"""How the store writes instants: fixed-width UTC text, so string order is time order (index sort keys)."""

from __future__ import annotations

import datetime as dt

import pendulum
from pynamodb.attributes import Attribute
from pynamodb.constants import STRING

_FORMAT = "%Y-%m-%dT%H:%M:%S.%f+0000"


def ts(value: dt.datetime) -> str:
    """The stored form of an instant: UTC, fixed width, so string order is time order (index sort keys).

    Naive datetimes are taken as UTC, as Airflow does for values it stores.
    """
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    return value.astimezone(dt.UTC).strftime(_FORMAT)


def parse_ts(text: str) -> pendulum.DateTime:
    parsed = dt.datetime.strptime(text, _FORMAT).replace(tzinfo=dt.UTC)
    return pendulum.instance(parsed, tz=pendulum.UTC)


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
