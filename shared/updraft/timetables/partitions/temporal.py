"""Temporal partition mappers (a timestamp key -> the start of its hour/day/week/month/quarter/year) and the
fan-out mapper (one coarse key -> one downstream key per member of its window); Airflow's
``airflow.partition_mappers.temporal``."""

from __future__ import annotations

import re
from abc import abstractmethod
from datetime import datetime, timedelta
from typing import Any, ClassVar

from updraft.timetables._time import coerce_timezone, encode_timezone, make_aware
from updraft.timetables.partitions.mappers import PartitionMapper
from updraft.timetables.partitions.windows import Window

_DEFAULT_PLACEHOLDER = r"\w+"
_STRPTIME_PATTERNS = {f"%{d}": r"\d{4}" if d == "Y" else r"\d{2}" for d in "YmdHMSVUW"}


def compile_output_format_regex(fmt: str, placeholder_patterns: dict[str, str] | None = None) -> re.Pattern[str]:
    """A regex with a named group per strftime directive (``%Y`` -> ``Y``) and per ``{name}`` placeholder, so
    a formatted key parses back; malformed formats (a directive or placeholder twice, ``{}``, two adjacent
    default placeholders) raise ValueError here rather than in the scheduler."""
    placeholder_patterns = placeholder_patterns or {}
    parts: list[str] = []
    seen: set[str] = set()
    prev_default = False
    i = 0
    while i < len(fmt):
        if fmt[i] == "%" and fmt[i:i + 2] in _STRPTIME_PATTERNS:
            name = fmt[i + 1]
            if name in seen:
                raise ValueError(f"output_format {fmt!r} reuses directive {fmt[i:i + 2]!r}; each strftime directive "
                                 "may appear at most once.")
            seen.add(name)
            parts.append(f"(?P<{name}>{_STRPTIME_PATTERNS[fmt[i:i + 2]]})")
            i += 2
            prev_default = False
            continue
        if fmt[i] == "{" and (end := fmt.find("}", i)) != -1:
            name = fmt[i + 1:end]
            if not name.isidentifier():
                raise ValueError(f"output_format {fmt!r} has invalid placeholder {{{name}}}; placeholder names must "
                                 "be valid Python identifiers.")
            if name in seen:
                raise ValueError(f"output_format {fmt!r} reuses placeholder {{{name}}}; each placeholder may appear "
                                 "at most once.")
            seen.add(name)
            is_default = name not in placeholder_patterns
            if is_default and prev_default:
                raise ValueError(f"output_format {fmt!r} has adjacent default-pattern placeholders ending at "
                                 f"{{{name}}}; insert a separator between them, or narrow one via "
                                 "placeholder_patterns.")
            pattern = placeholder_patterns.get(name, _DEFAULT_PLACEHOLDER)
            parts.append(f"(?P<{name}>{pattern})")
            i = end + 1
            prev_default = is_default
            continue
        parts.append(re.escape(fmt[i]))
        i += 1
        prev_default = False
    return re.compile(f"^{''.join(parts)}$")


class _BaseTemporalMapper(PartitionMapper):
    expected_decoded_type: ClassVar[type] = datetime
    default_output_format: ClassVar[str]

    def __init__(self, *, timezone: Any = "UTC", input_format: str = "%Y-%m-%dT%H:%M:%S",
                 output_format: str | None = None, max_downstream_keys: int | None = None) -> None:
        super().__init__(max_downstream_keys=max_downstream_keys)
        self.input_format = input_format
        self.output_format = output_format or self.default_output_format
        self._timezone = coerce_timezone(timezone)

    def to_downstream(self, key: str) -> str:
        parsed = datetime.strptime(key, self.input_format)
        parsed = make_aware(parsed, self._timezone) if parsed.tzinfo is None else parsed.astimezone(self._timezone)
        return self.format(self.normalize(parsed))

    @abstractmethod
    def normalize(self, when: datetime) -> datetime:
        """The start of the period holding ``when``."""

    def format(self, when: datetime) -> str:
        return when.strftime(self.output_format)

    def decode_downstream(self, downstream_key: str) -> datetime:
        return datetime.strptime(downstream_key, self.output_format)

    def to_partition_date(self, downstream_key: str) -> datetime:
        anchor = self.normalize(self.decode_downstream(downstream_key))
        return make_aware(anchor, self._timezone) if anchor.tzinfo is None else anchor

    def encode_upstream(self, decoded: datetime) -> str:
        naive = decoded.astimezone(self._timezone).replace(tzinfo=None) if decoded.tzinfo is not None else decoded
        return make_aware(naive, self._timezone).strftime(self.input_format)

    def serialize(self) -> dict[str, Any]:
        data: dict[str, Any] = {"timezone": encode_timezone(self._timezone), "input_format": self.input_format,
                                "output_format": self.output_format}
        if self.max_downstream_keys is not None:
            data["max_downstream_keys"] = self.max_downstream_keys
        return data

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> PartitionMapper:
        return cls(timezone=data.get("timezone", "UTC"), input_format=data["input_format"],
                   output_format=data["output_format"], max_downstream_keys=data.get("max_downstream_keys"))


class StartOfHourMapper(_BaseTemporalMapper):
    """``2024-03-13T10:42:15`` -> ``2024-03-13T10``."""

    default_output_format = "%Y-%m-%dT%H"

    def normalize(self, when: datetime) -> datetime:
        return when.replace(minute=0, second=0, microsecond=0)


class StartOfDayMapper(_BaseTemporalMapper):
    """``2024-03-13T10:42:15`` -> ``2024-03-13``."""

    default_output_format = "%Y-%m-%d"

    def normalize(self, when: datetime) -> datetime:
        return when.replace(hour=0, minute=0, second=0, microsecond=0)


class StartOfWeekMapper(_BaseTemporalMapper):
    """``2024-03-13T10:42:15`` -> ``2024-03-11 (W11)`` (the ISO week's Monday)."""

    default_output_format = "%Y-%m-%d (W%V)"

    def __init__(self, *, timezone: Any = "UTC", input_format: str = "%Y-%m-%dT%H:%M:%S",
                 output_format: str | None = None, max_downstream_keys: int | None = None) -> None:
        super().__init__(timezone=timezone, input_format=input_format, output_format=output_format,
                         max_downstream_keys=max_downstream_keys)
        self._key_pattern = compile_output_format_regex(self.output_format)

    def normalize(self, when: datetime) -> datetime:
        return (when - timedelta(days=when.weekday())).replace(hour=0, minute=0, second=0, microsecond=0)

    def decode_downstream(self, downstream_key: str) -> datetime:
        match = self._key_pattern.search(downstream_key)
        if match is None or not {"Y", "m", "d"}.issubset(match.groupdict()):
            raise ValueError(f"StartOfWeekMapper.decode_downstream could not parse {downstream_key!r} with "
                             f"output_format {self.output_format!r}; output_format must include the %Y, %m and %d "
                             "directives.")
        return datetime(int(match["Y"]), int(match["m"]), int(match["d"]))


class StartOfMonthMapper(_BaseTemporalMapper):
    """``2024-03-13T10:42:15`` -> ``2024-03``."""

    default_output_format = "%Y-%m"

    def normalize(self, when: datetime) -> datetime:
        return when.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


class StartOfQuarterMapper(_BaseTemporalMapper):
    """``2024-03-13T10:42:15`` -> ``2024-Q1``."""

    default_output_format = "%Y-Q{quarter}"

    def __init__(self, *, timezone: Any = "UTC", input_format: str = "%Y-%m-%dT%H:%M:%S",
                 output_format: str | None = None, max_downstream_keys: int | None = None) -> None:
        super().__init__(timezone=timezone, input_format=input_format, output_format=output_format,
                         max_downstream_keys=max_downstream_keys)
        self._key_pattern = compile_output_format_regex(self.output_format, {"quarter": r"[1-4]"})

    def normalize(self, when: datetime) -> datetime:
        month = (when.month - 1) // 3 * 3 + 1
        return when.replace(month=month, day=1, hour=0, minute=0, second=0, microsecond=0)

    def format(self, when: datetime) -> str:
        return when.strftime(self.output_format).format(quarter=(when.month - 1) // 3 + 1)

    def decode_downstream(self, downstream_key: str) -> datetime:
        match = self._key_pattern.search(downstream_key)
        if match is None or not {"Y", "quarter"}.issubset(match.groupdict()):
            raise ValueError(f"StartOfQuarterMapper.decode_downstream could not parse {downstream_key!r} with "
                             f"output_format {self.output_format!r}; output_format must include the %Y directive and "
                             "the {quarter} placeholder.")
        return datetime(int(match["Y"]), (int(match["quarter"]) - 1) * 3 + 1, 1)


class StartOfYearMapper(_BaseTemporalMapper):
    """``2024-03-13T10:42:15`` -> ``2024``."""

    default_output_format = "%Y"

    def normalize(self, when: datetime) -> datetime:
        return when.replace(month=1, day=1, hour=0, minute=0, second=0, microsecond=0)


_DEFAULT_DOWNSTREAM_BY_WINDOW: dict[str, type[_BaseTemporalMapper]] = {
    "DayWindow": StartOfHourMapper,
    "WeekWindow": StartOfDayMapper,
    "MonthWindow": StartOfDayMapper,
    "QuarterWindow": StartOfMonthMapper,
    "YearWindow": StartOfMonthMapper,
}


class FanOutMapper(PartitionMapper):
    """One upstream key -> one downstream key per member of ``window`` (the period the upstream key starts, or
    with ``Window.Direction.BACKWARD`` the one it ends), each formatted by ``downstream_mapper`` (defaulted from the
    window's class; required for the others)."""

    def __init__(self, *, upstream_mapper: PartitionMapper, window: Window,
                 downstream_mapper: PartitionMapper | None = None, max_downstream_keys: int | None = None) -> None:
        super().__init__(max_downstream_keys=max_downstream_keys)
        self.upstream_mapper = upstream_mapper
        self.window = window
        if downstream_mapper is None:
            default = _DEFAULT_DOWNSTREAM_BY_WINDOW.get(type(window).__name__)
            if default is None:
                raise ValueError(f"{type(self).__name__} has no default downstream_mapper for window type "
                                 f"{type(window).__name__}; pass downstream_mapper explicitly.")
            downstream_mapper = default()
        self.downstream_mapper = downstream_mapper

    def to_downstream(self, key: str) -> list[str]:
        formatted = self.upstream_mapper.to_downstream(key)
        if not isinstance(formatted, str):
            raise TypeError("FanOutMapper.upstream_mapper must produce a single key from to_downstream; chained "
                            "fan-out (mapper that itself returns multiple keys) is not supported.")
        coarse = self.upstream_mapper.decode_downstream(formatted)
        return [_format_with(self.downstream_mapper, item) for item in self.window.to_upstream(coarse)]

    def to_partition_date(self, downstream_key: str) -> datetime | None:
        return self.downstream_mapper.to_partition_date(downstream_key)

    def serialize(self) -> dict[str, Any]:
        # lazy: circle (timetables.partitions.codec imports this module)
        from updraft.timetables.partitions.codec import encode_partition_mapper, encode_window

        data: dict[str, Any] = {"upstream_mapper": encode_partition_mapper(self.upstream_mapper),
                                "window": encode_window(self.window),
                                "downstream_mapper": encode_partition_mapper(self.downstream_mapper)}
        if self.max_downstream_keys is not None:
            data["max_downstream_keys"] = self.max_downstream_keys
        return data

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> PartitionMapper:
        # lazy: circle (timetables.partitions.codec imports this module)
        from updraft.timetables.partitions.codec import decode_partition_mapper, decode_window

        return cls(upstream_mapper=decode_partition_mapper(data["upstream_mapper"]),
                   window=decode_window(data["window"]),
                   downstream_mapper=decode_partition_mapper(data["downstream_mapper"]),
                   max_downstream_keys=data.get("max_downstream_keys"))


def _format_with(mapper: PartitionMapper, decoded: Any) -> str:
    formatter = getattr(mapper, "format", None)
    if callable(formatter):
        return str(formatter(decoded))
    if isinstance(decoded, datetime):
        return decoded.isoformat()
    return str(decoded)
