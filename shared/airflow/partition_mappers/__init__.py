"""``airflow.partition_mappers``: the built-in partition mappers, windows and wait policies.

Subclassing them is allowed (Airflow's plugin examples do), but a DAG that schedules on a subclass fails to parse:
Updraft's scheduler runs no user code (:mod:`updraft.timetables.partitions.codec`).
"""

from updraft.timetables.partitions.mappers import (
    AllowedKeyMapper,
    ChainMapper,
    FixedKeyMapper,
    IdentityMapper,
    PartitionMapper,
    ProductMapper,
    RollupMapper,
)
from updraft.timetables.partitions.temporal import (
    FanOutMapper,
    StartOfDayMapper,
    StartOfHourMapper,
    StartOfMonthMapper,
    StartOfQuarterMapper,
    StartOfWeekMapper,
    StartOfYearMapper,
)
from updraft.timetables.partitions.wait_policies import MinimumCount, WaitForAll
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
    "AllowedKeyMapper", "ChainMapper", "DayWindow", "FanOutMapper", "FixedKeyMapper", "HourWindow", "IdentityMapper",
    "MinimumCount", "MonthWindow", "PartitionMapper", "ProductMapper", "QuarterWindow", "RollupMapper",
    "SegmentWindow", "StartOfDayMapper", "StartOfHourMapper", "StartOfMonthMapper", "StartOfQuarterMapper",
    "StartOfWeekMapper", "StartOfYearMapper", "WaitForAll", "WeekWindow", "Window", "YearWindow",
]
