"""Rollup windows: which decoded upstream periods make up one downstream period (Airflow's
``airflow.partition_mappers.window``). They work on the upstream mapper's decoded form (a ``datetime`` for the
temporal mappers, a string for segments) and never on key strings."""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any, ClassVar


def _require_day_one(when: datetime, window_cls: type) -> None:
    if when.day != 1:
        raise ValueError(f"{window_cls.__name__} expects a period start on day 1 of the month, got "
                         f"{when.isoformat()}. The paired upstream mapper's decode_downstream must normalise to day 1.")


def _shift_months(when: datetime, months: int) -> datetime:
    total = when.month - 1 + months
    return when.replace(year=when.year + total // 12, month=total % 12 + 1)


class Window(ABC):
    """One downstream period's upstream members; ``direction`` BACKWARD yields the trailing period ending at the
    anchor instead of the one starting there."""

    class Direction(enum.StrEnum):
        BACKWARD = "backward"
        FORWARD = "forward"

    expected_decoded_type: ClassVar[type] = str

    def __init__(self, *, direction: Window.Direction | str = Direction.FORWARD) -> None:
        self.direction = self.Direction(direction)

    @abstractmethod
    def to_upstream(self, decoded_downstream: Any) -> Iterable[Any]:
        """Each decoded upstream item composing ``decoded_downstream``."""

    def _steps(self, start: datetime, count: int, step: Callable[[datetime, int], datetime]) -> Iterable[datetime]:
        base = step(start, -(count - 1)) if self.direction is Window.Direction.BACKWARD else start
        return (step(base, i) for i in range(count))

    def serialize(self) -> dict[str, Any]:
        return {"direction": self.direction.value}

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> Window:
        return cls(direction=cls.Direction(data["direction"]))

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.serialize() == other.serialize()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self), repr(self.serialize())))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.serialize()!r})"


class HourWindow(Window):
    """Sixty minute period-starts."""

    expected_decoded_type: ClassVar[type] = datetime

    def to_upstream(self, decoded_downstream: datetime) -> Iterable[datetime]:
        return self._steps(decoded_downstream, 60, lambda s, i: s + timedelta(minutes=i))


class DayWindow(Window):
    """Twenty-four hourly period-starts (naive steps: always 24, whatever DST does)."""

    expected_decoded_type: ClassVar[type] = datetime

    def to_upstream(self, decoded_downstream: datetime) -> Iterable[datetime]:
        return self._steps(decoded_downstream, 24, lambda s, i: s + timedelta(hours=i))


class WeekWindow(Window):
    """Seven daily period-starts."""

    expected_decoded_type: ClassVar[type] = datetime

    def to_upstream(self, decoded_downstream: datetime) -> Iterable[datetime]:
        return self._steps(decoded_downstream, 7, lambda s, i: s + timedelta(days=i))


class MonthWindow(Window):
    """Every day of the calendar month starting at the anchor (day 1); BACKWARD: the days after the previous
    month's first day up to and including the anchor."""

    expected_decoded_type: ClassVar[type] = datetime

    def to_upstream(self, decoded_downstream: datetime) -> Iterable[datetime]:
        start = decoded_downstream
        _require_day_one(start, type(self))
        if self.direction is Window.Direction.BACKWARD:
            prev = _shift_months(start, -1)
            return (prev + timedelta(days=i + 1) for i in range((start - prev).days))
        return (start + timedelta(days=i) for i in range((_shift_months(start, 1) - start).days))


class QuarterWindow(Window):
    """Three monthly period-starts."""

    expected_decoded_type: ClassVar[type] = datetime

    def to_upstream(self, decoded_downstream: datetime) -> Iterable[datetime]:
        _require_day_one(decoded_downstream, type(self))
        return self._steps(decoded_downstream, 3, _shift_months)


class YearWindow(Window):
    """Twelve monthly period-starts."""

    expected_decoded_type: ClassVar[type] = datetime

    def to_upstream(self, decoded_downstream: datetime) -> Iterable[datetime]:
        _require_day_one(decoded_downstream, type(self))
        return self._steps(decoded_downstream, 12, _shift_months)


class SegmentWindow(Window):
    """A fixed set of categorical keys that make up the one downstream period, whatever its anchor."""

    expected_decoded_type: ClassVar[type] = str

    def __init__(self, segments: Iterable[str]) -> None:
        super().__init__()
        validated: list[str] = []
        for i, item in enumerate(segments):
            if not isinstance(item, str):
                raise ValueError(f"SegmentWindow segment keys must be str; got {type(item).__name__!r} at index "
                                 f"{i}: {item!r}")
            if not item:
                raise ValueError(f"SegmentWindow segment keys must be non-empty; got an empty string at index {i}.")
            validated.append(item)
        if not validated:
            raise ValueError("SegmentWindow requires at least one segment key; got an empty iterable.")
        self._segments = frozenset(validated)

    def to_upstream(self, decoded_downstream: Any) -> frozenset[str]:
        return self._segments

    def serialize(self) -> dict[str, Any]:
        return {"segments": sorted(self._segments)}

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> SegmentWindow:
        return cls(data["segments"])
