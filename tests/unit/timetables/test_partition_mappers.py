"""Partition mappers, windows and wait policies against Airflow 3.3.2's own answers.

Every expected value below is what real Airflow 3.3.2's ``airflow.partition_mappers`` returned for the same call
(run side by side, /work/shared/notes/airflow-reference-run.md); the calls go through the ``airflow`` shim, as a
DAG file's would.
"""

from __future__ import annotations

import pytest

from airflow.partition_mappers import (
    AllowedKeyMapper,
    ChainMapper,
    DayWindow,
    FanOutMapper,
    FixedKeyMapper,
    HourWindow,
    IdentityMapper,
    MinimumCount,
    MonthWindow,
    ProductMapper,
    QuarterWindow,
    RollupMapper,
    SegmentWindow,
    StartOfDayMapper,
    StartOfHourMapper,
    StartOfMonthMapper,
    StartOfQuarterMapper,
    StartOfWeekMapper,
    StartOfYearMapper,
    WaitForAll,
    WeekWindow,
    Window,
    YearWindow,
)
from updraft.timetables.partitions.codec import (
    CustomPartitionClassError,
    decode_partition_mapper,
    encode_partition_mapper,
)


def norm(x):
    return x if isinstance(x, str) else sorted(x)


def _days(month: str, first: int, last: int) -> list[str]:
    return [f"{month}-{d:02d}" for d in range(first, last + 1)]


AIRFLOW_ANSWERS = [
    ("hour", lambda: StartOfHourMapper().to_downstream("2024-03-13T10:42:15"),
     "2024-03-13T10"),
    ("day", lambda: StartOfDayMapper().to_downstream("2024-03-13T10:42:15"),
     "2024-03-13"),
    ("week", lambda: StartOfWeekMapper().to_downstream("2024-03-13T10:42:15"),
     "2024-03-11 (W11)"),
    ("month", lambda: StartOfMonthMapper().to_downstream("2024-03-13T10:42:15"),
     "2024-03"),
    ("quarter", lambda: StartOfQuarterMapper().to_downstream("2024-05-13T10:42:15"),
     "2024-Q2"),
    ("year", lambda: StartOfYearMapper().to_downstream("2024-03-13T10:42:15"),
     "2024"),
    ("day_tz", lambda: StartOfDayMapper(timezone="Asia/Taipei").to_downstream("2024-03-13T22:42:15"),
     "2024-03-13"),
    ("day_aware", lambda: StartOfDayMapper(timezone="Asia/Taipei", input_format="%Y-%m-%dT%H:%M:%S%z").to_downstream("2024-03-13T20:42:15+0000"),
     "2024-03-14"),
    ("product", lambda: ProductMapper(IdentityMapper(), StartOfDayMapper()).to_downstream("us|2026-06-14T03:00:00"),
     "us|2026-06-14"),
    ("chain", lambda: norm(ChainMapper(StartOfDayMapper(output_format="%Y-%m-%dT%H:%M:%S"), FanOutMapper(upstream_mapper=StartOfDayMapper(), window=DayWindow())).to_downstream("2024-03-13T10:42:15")),
     [f"2024-03-13T{h:02d}" for h in range(24)]),
    ("fanout_week", lambda: norm(FanOutMapper(upstream_mapper=StartOfWeekMapper(), window=WeekWindow()).to_downstream("2024-03-13T10:42:15")),
     ["2024-03-11", "2024-03-12", "2024-03-13", "2024-03-14", "2024-03-15", "2024-03-16", "2024-03-17"]),
    ("fanout_week_back", lambda: norm(FanOutMapper(upstream_mapper=StartOfWeekMapper(), window=WeekWindow(direction=Window.Direction.BACKWARD)).to_downstream("2024-03-13T10:42:15")),
     ["2024-03-05", "2024-03-06", "2024-03-07", "2024-03-08", "2024-03-09", "2024-03-10", "2024-03-11"]),
    ("fanout_segment", lambda: norm(FanOutMapper(upstream_mapper=IdentityMapper(), window=SegmentWindow(["us","eu","apac"]), downstream_mapper=IdentityMapper()).to_downstream("us")),
     ["apac", "eu", "us"]),
    ("rollup_day", lambda: norm(RollupMapper(upstream_mapper=StartOfDayMapper(), window=DayWindow()).to_upstream("2024-03-13")),
     [f"2024-03-13T{h:02d}:00:00" for h in range(24)]),
    ("rollup_month", lambda: norm(RollupMapper(upstream_mapper=StartOfMonthMapper(input_format="%Y-%m-%d"), window=MonthWindow()).to_upstream("2024-02")),
     _days("2024-02", 1, 29)),
    ("rollup_month_back", lambda: norm(RollupMapper(upstream_mapper=StartOfMonthMapper(input_format="%Y-%m-%d"), window=MonthWindow(direction=Window.Direction.BACKWARD)).to_upstream("2024-03")),
     [*_days("2024-02", 2, 29), "2024-03-01"]),
    ("rollup_quarter", lambda: norm(RollupMapper(upstream_mapper=StartOfQuarterMapper(input_format="%Y-%m"), window=QuarterWindow()).to_upstream("2024-Q2")),
     ["2024-04", "2024-05", "2024-06"]),
    ("rollup_year", lambda: norm(RollupMapper(upstream_mapper=StartOfYearMapper(input_format="%Y-%m"), window=YearWindow()).to_upstream("2024")),
     [f"2024-{m:02d}" for m in range(1, 13)]),
    ("rollup_hour", lambda: len(RollupMapper(upstream_mapper=StartOfHourMapper(input_format="%Y-%m-%dT%H:%M"), window=HourWindow()).to_upstream("2024-03-13T10")),
     60),
    ("rollup_segment", lambda: norm(RollupMapper(upstream_mapper=FixedKeyMapper("all"), window=SegmentWindow(["us","eu"])).to_upstream("all")),
     ["eu", "us"]),
    ("pdate_week", lambda: StartOfWeekMapper().to_partition_date("2024-03-11 (W11)").isoformat(),
     "2024-03-11T00:00:00+00:00"),
    ("pdate_day_tz", lambda: StartOfDayMapper(timezone="Asia/Taipei").to_partition_date("2024-03-13").isoformat(),
     "2024-03-13T00:00:00+08:00"),
    ("pdate_product", lambda: ProductMapper(IdentityMapper(), StartOfDayMapper()).to_partition_date("us|2026-06-14").isoformat(),
     "2026-06-14T00:00:00+00:00"),
    ("pdate_identity", lambda: IdentityMapper().to_partition_date("x"),
     None),
    ("min2", lambda: [MinimumCount(2).is_satisfied_by_keys(matched={"us","eu"}, expected={"us","eu","apac"}).satisfied, MinimumCount(-1).is_satisfied_by_keys(matched={"us"}, expected={"us","eu","apac"}).satisfied, MinimumCount(4).is_satisfied_by_keys(matched={"us"}, expected={"us","eu","apac"}).unreachable],
     [True, False, True]),
    ("all", lambda: [WaitForAll().is_satisfied_by_keys(matched={"us","eu"}, expected={"us","eu","apac"}).satisfied, WaitForAll().is_satisfied_by_keys(matched={"us","eu","apac","x"}, expected={"us","eu","apac"}).satisfied],
     [False, True]),
]



@pytest.mark.parametrize(("name", "call", "expected"), AIRFLOW_ANSWERS, ids=[c[0] for c in AIRFLOW_ANSWERS])
def test_same_answer_as_airflow(name, call, expected):
    assert call() == expected


AIRFLOW_REFUSALS = [
    ("allowed_bad", lambda: AllowedKeyMapper(["us"]).to_downstream("eu"), ValueError),
    ("product_bad", lambda: ProductMapper(IdentityMapper(), IdentityMapper()).to_downstream("a"), ValueError),
    ("min0", lambda: MinimumCount(0), ValueError),
    ("fanout_nodefault", lambda: FanOutMapper(upstream_mapper=IdentityMapper(), window=SegmentWindow(["a"])), ValueError),
    ("rollup_mismatch", lambda: RollupMapper(upstream_mapper=IdentityMapper(), window=DayWindow()), TypeError),
    ("segment_empty", lambda: SegmentWindow([]), ValueError),
    ("fixed_empty", lambda: FixedKeyMapper(""), ValueError),
]


@pytest.mark.parametrize(("name", "call", "error"), AIRFLOW_REFUSALS, ids=[c[0] for c in AIRFLOW_REFUSALS])
def test_same_refusal_as_airflow(name, call, error):
    with pytest.raises(error):
        call()


def test_every_builtin_round_trips_through_its_serialized_form():
    mappers = [
        RollupMapper(upstream_mapper=StartOfMonthMapper(input_format="%Y-%m-%d"), window=MonthWindow(),
                     wait_policy=MinimumCount(-2), max_downstream_keys=3),
        FanOutMapper(upstream_mapper=StartOfWeekMapper(timezone="Asia/Taipei"),
                     window=WeekWindow(direction=Window.Direction.BACKWARD)),
        ProductMapper(AllowedKeyMapper(["us"]), StartOfQuarterMapper(), delimiter="/"),
        ChainMapper(StartOfYearMapper(), IdentityMapper()),
        RollupMapper(upstream_mapper=FixedKeyMapper("all"), window=SegmentWindow(["a", "b"]), wait_policy=WaitForAll()),
        RollupMapper(upstream_mapper=StartOfHourMapper(), window=HourWindow()),
        RollupMapper(upstream_mapper=StartOfYearMapper(), window=YearWindow()),
        RollupMapper(upstream_mapper=StartOfQuarterMapper(), window=QuarterWindow()),
        RollupMapper(upstream_mapper=StartOfDayMapper(), window=DayWindow()),
    ]
    for mapper in mappers:
        encoded = encode_partition_mapper(mapper)
        assert encoded["__type"].startswith("airflow.partition_mappers.")
        assert decode_partition_mapper(encoded) == mapper


def test_a_mapper_class_of_the_dag_file_is_refused_by_name():
    class PrefixStripMapper(IdentityMapper):
        pass

    with pytest.raises(CustomPartitionClassError, match="PrefixStripMapper is not supported in Updraft"):
        encode_partition_mapper(ChainMapper(IdentityMapper(), PrefixStripMapper()))
