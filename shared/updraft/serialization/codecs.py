"""Per-field codecs: how each attribute of a serialized DAG or task is written to JSON and read back."""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import field
from typing import Any

from updraft.serialization.encoding import decode_param, decode_value, encode_param, encode_value


class Codec:
    def encode(self, value: Any) -> Any:
        return value

    def decode(self, data: Any) -> Any:
        return data


class _DateTime(Codec):
    def encode(self, value: Any) -> Any:
        return None if value is None else value.isoformat()

    def decode(self, data: Any) -> Any:
        return None if data is None else _parsed(data)


@functools.lru_cache(maxsize=1024)
def _parsed(text: str) -> Any:
    """pendulum's parse, once per text: a DAG's tasks mostly share their dates, and pendulum's parser is ~15 us a
    date (a 200-task DAG's deserialization spent a third of its time there). Its DateTimes are immutable."""
    import pendulum

    return pendulum.parse(text)


class _Duration(Codec):
    def encode(self, value: Any) -> Any:
        return None if value is None else value.total_seconds()

    def decode(self, data: Any) -> Any:
        return None if data is None else dt.timedelta(seconds=data)


class _Value(Codec):
    def encode(self, value: Any) -> Any:
        return encode_value(value)

    def decode(self, data: Any) -> Any:
        return decode_value(data)


class _Params(Codec):
    def encode(self, value: Any) -> Any:
        return {name: encode_param(param) for name, param in value.items()} if value else {}

    def decode(self, data: Any) -> Any:
        return {name: decode_param(p) for name, p in (data or {}).items()}


class _Timetable(Codec):
    def encode(self, value: Any) -> Any:
        # lazy: cold start (the registry loads every timetable and croniter; the scheduler imports codecs without it)
        from updraft.timetables.registry import encode_timetable

        return encode_timetable(value)

    def decode(self, data: Any) -> Any:
        # lazy: cold start (the registry loads every timetable and croniter; the scheduler imports codecs without it)
        from updraft.timetables.registry import decode_timetable

        return decode_timetable(data, unloaded_ok=True)


class _Sorted(Codec):
    def encode(self, value: Any) -> Any:
        return sorted(value)

    def decode(self, data: Any) -> Any:
        return sorted(data)


RAW = Codec()
DATETIME = _DateTime()
DURATION = _Duration()
VALUE = _Value()
PARAMS = _Params()
TIMETABLE = _Timetable()
SORTED = _Sorted()


def spec(codec: Codec, default: Any = None, *, factory: Any = None) -> Any:
    """A dataclass field that knows its codec."""
    if factory is not None:
        return field(default_factory=factory, metadata={"codec": codec})
    return field(default=default, metadata={"codec": codec})
