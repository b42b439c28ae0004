"""Cron schedules in Europe/Berlin keep local wall-clock times across the 2024 DST changes, as Airflow's do.

Berlin springs forward on 2024-03-31 (02:00 CET -> 03:00 CEST) and falls back on 2024-10-27
(03:00 CEST -> 02:00 CET). Expected instants follow Airflow's rules: a skipped local time runs right
after the gap, an ambiguous one at its second occurrence, and hourly schedules keep the repeated hour.
"""

from __future__ import annotations

import pytest
from timetables_helpers import berlin, iso, utc

from updraft.timetables import (
    CronDataIntervalTimetable,
    CronTriggerTimetable,
    DataInterval,
    next_dagruns,
)

TZ = "Europe/Berlin"


def fire_times(timetable, start, n):
    return [r[2] for r in iso(next_dagruns(timetable, start_date=start, end_date=None, catchup=True, n=n))]


class TestSpringForward:
    def test_daily_0200_trigger(self):
        assert fire_times(CronTriggerTimetable("0 2 * * *", timezone=TZ), berlin(2024, 3, 29), 4) == [
            "2024-03-29T01:00:00+00:00",  # 02:00 CET
            "2024-03-30T01:00:00+00:00",  # 02:00 CET
            "2024-03-31T01:00:00+00:00",  # 02:00 does not exist: 03:00 CEST
            "2024-04-01T00:00:00+00:00",  # 02:00 CEST
        ]

    def test_daily_0200_data_intervals(self):
        scheduled = iso(
            next_dagruns(
                CronDataIntervalTimetable("0 2 * * *", TZ),
                start_date=berlin(2024, 3, 30),
                end_date=None,
                catchup=True,
                n=3,
            )
        )
        assert scheduled == [
            ("2024-03-30T01:00:00+00:00", "2024-03-31T01:00:00+00:00", "2024-03-31T01:00:00+00:00"),
            ("2024-03-31T01:00:00+00:00", "2024-04-01T00:00:00+00:00", "2024-04-01T00:00:00+00:00"),
            ("2024-04-01T00:00:00+00:00", "2024-04-02T00:00:00+00:00", "2024-04-02T00:00:00+00:00"),
        ]

    def test_midnight_intervals_are_23_hours_long_on_the_short_day(self):
        runs = next_dagruns(
            CronDataIntervalTimetable("@daily", TZ), start_date=berlin(2024, 3, 31), end_date=None, catchup=True, n=2
        )
        lengths = [(r.data_interval.end - r.data_interval.start).total_seconds() / 3600 for r in runs]
        assert lengths == [23.0, 24.0]
        assert runs[0].data_interval.start == utc(2024, 3, 30, 23)

    def test_hourly_skips_the_missing_hour(self):
        assert fire_times(CronTriggerTimetable("0 * * * *", timezone=TZ), berlin(2024, 3, 31, 1), 3) == [
            "2024-03-31T00:00:00+00:00",  # 01:00 CET
            "2024-03-31T01:00:00+00:00",  # 03:00 CEST
            "2024-03-31T02:00:00+00:00",  # 04:00 CEST
        ]


class TestFallBack:
    def test_daily_0200_trigger_runs_at_second_occurrence(self):
        assert fire_times(CronTriggerTimetable("0 2 * * *", timezone=TZ), berlin(2024, 10, 25), 4) == [
            "2024-10-25T00:00:00+00:00",  # 02:00 CEST
            "2024-10-26T00:00:00+00:00",  # 02:00 CEST
            "2024-10-27T01:00:00+00:00",  # 02:00 happens twice: the CET one
            "2024-10-28T01:00:00+00:00",  # 02:00 CET
        ]

    def test_midnight_intervals_are_25_hours_long_on_the_long_day(self):
        runs = next_dagruns(
            CronDataIntervalTimetable("@daily", TZ), start_date=berlin(2024, 10, 27), end_date=None, catchup=True, n=2
        )
        lengths = [(r.data_interval.end - r.data_interval.start).total_seconds() / 3600 for r in runs]
        assert lengths == [25.0, 24.0]

    def test_half_past_every_hour_keeps_the_repeated_hour(self):
        assert fire_times(CronTriggerTimetable("30 * * * *", timezone=TZ), berlin(2024, 10, 27, 1), 5) == [
            "2024-10-26T23:30:00+00:00",  # 01:30 CEST
            "2024-10-27T00:30:00+00:00",  # 02:30 CEST
            "2024-10-27T01:30:00+00:00",  # 02:30 CET, the repeated hour
            "2024-10-27T02:30:00+00:00",  # 03:30 CET
            "2024-10-27T03:30:00+00:00",
        ]

    def test_every_two_hours_skips_the_first_02_00(self):
        # Schedules coarser than hourly resolve the ambiguous 02:00 to its second occurrence only.
        assert fire_times(CronTriggerTimetable("0 */2 * * *", timezone=TZ), berlin(2024, 10, 27, 0, 30), 3) == [
            "2024-10-27T01:00:00+00:00",
            "2024-10-27T03:00:00+00:00",
            "2024-10-27T05:00:00+00:00",
        ]

    def test_manual_run_on_the_long_day(self):
        timetable = CronDataIntervalTimetable("@daily", TZ)
        interval = timetable.infer_manual_data_interval(run_after=utc(2024, 10, 27, 12))
        assert interval == DataInterval(utc(2024, 10, 25, 22), utc(2024, 10, 26, 22))


@pytest.mark.parametrize("cls", [CronDataIntervalTimetable, CronTriggerTimetable])
def test_results_are_aware_pendulum_instants(cls):
    timetable = cls("0 2 * * *", TZ) if cls is CronDataIntervalTimetable else cls("0 2 * * *", timezone=TZ)
    for run in next_dagruns(timetable, start_date=berlin(2024, 3, 29), end_date=None, catchup=True, n=4):
        for value in (run.run_after, *run.data_interval):
            assert value.tzinfo is not None
            assert type(value).__module__.startswith("pendulum")
