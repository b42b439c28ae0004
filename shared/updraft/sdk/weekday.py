"""WeekDay: ISO day numbers for the day-of-week branch operator and sensor (standard provider's ``utils.weekday``)."""

from __future__ import annotations

import enum
from collections.abc import Iterable


@enum.unique
class WeekDay(enum.IntEnum):
    """Days of the week, numbered as ``datetime.isoweekday()`` (Monday is 1)."""

    MONDAY = 1
    TUESDAY = 2
    WEDNESDAY = 3
    THURSDAY = 4
    FRIDAY = 5
    SATURDAY = 6
    SUNDAY = 7

    @classmethod
    def get_weekday_number(cls, week_day_str: str) -> WeekDay:
        """The day for its full name, in any case (``"Sunday"``); Airflow's AttributeError otherwise."""
        sanitized = week_day_str.upper()
        if sanitized not in cls.__members__:
            raise AttributeError(f'Invalid Week Day passed: "{week_day_str}"')
        return cls[sanitized]

    @classmethod
    def convert(cls, day: str | WeekDay) -> int:
        if isinstance(day, WeekDay):
            return day
        return cls.get_weekday_number(week_day_str=day)

    @classmethod
    def validate_week_day(cls, week_day: str | WeekDay | Iterable[str] | Iterable[WeekDay]) -> set[int]:
        """The set of day numbers ``week_day`` names, checked at parse time with Airflow's messages."""
        if not isinstance(week_day, Iterable):
            if isinstance(week_day, WeekDay):
                week_day = {week_day}
            else:
                raise TypeError(
                    f"Unsupported Type for week_day parameter: {type(week_day)}."
                    "Input should be iterable type:"
                    "str, set, list, dict or Weekday enum type"
                )
        if isinstance(week_day, str):
            week_day = {week_day}
        return {cls.convert(item) for item in week_day}
