"""``airflow.partition_mappers.window``: re-exports of Updraft's built-in partition classes."""

from updraft.timetables.partitions.windows import (
    DayWindow,
    HourWindow,
    MonthWindow,
    QuarterWindow,
    SegmentWindow,
    WeekWindow,
    Window,
    YearWindow,
)

__all__ = [
    "DayWindow",
    "HourWindow",
    "MonthWindow",
    "QuarterWindow",
    "SegmentWindow",
    "WeekWindow",
    "Window",
    "YearWindow",
]
