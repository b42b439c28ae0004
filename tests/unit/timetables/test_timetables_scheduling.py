"""Scheduling semantics beyond the bench: catchup=False, run_immediately, end dates, simple and delta schedules."""

from __future__ import annotations

import datetime

import pytest
from dateutil.relativedelta import relativedelta
from timetables_helpers import START, iso, plan, utc

from updraft.timetables import (
    ContinuousTimetable,
    CronDataIntervalTimetable,
    CronTriggerTimetable,
    DataInterval,
    DeltaDataIntervalTimetable,
    DeltaTriggerTimetable,
    NullTimetable,
    OnceTimetable,
    TimeRestriction,
    frozen_now,
    next_dagruns,
    utcnow,
)

NOW = utc(2024, 5, 15, 10, 30)  # a Wednesday


def runs(timetable, *, n=3, now=NOW, **kwargs):
    return iso(plan(timetable, n=n, now=now, **kwargs))


class TestCatchupFalse:
    def test_cron_data_interval_runs_latest_complete_interval_first(self):
        assert runs(CronDataIntervalTimetable("@daily", "UTC"), catchup=False) == [
            ("2024-05-14T00:00:00+00:00", "2024-05-15T00:00:00+00:00", "2024-05-15T00:00:00+00:00"),
            ("2024-05-15T00:00:00+00:00", "2024-05-16T00:00:00+00:00", "2024-05-16T00:00:00+00:00"),
            ("2024-05-16T00:00:00+00:00", "2024-05-17T00:00:00+00:00", "2024-05-17T00:00:00+00:00"),
        ]

    def test_cron_data_interval_now_on_boundary_takes_interval_that_just_ended(self):
        first = runs(CronDataIntervalTimetable("@daily", "UTC"), catchup=False, now=utc(2024, 5, 15), n=1)
        assert first == [("2024-05-14T00:00:00+00:00", "2024-05-15T00:00:00+00:00", "2024-05-15T00:00:00+00:00")]

    def test_cron_data_interval_future_start_date_wins(self):
        first = runs(CronDataIntervalTimetable("@daily", "UTC"), start=utc(2024, 6, 1, 12), catchup=False, n=1)
        assert first == [("2024-06-02T00:00:00+00:00", "2024-06-03T00:00:00+00:00", "2024-06-03T00:00:00+00:00")]

    def test_cron_data_interval_skips_ahead_after_old_last_run(self):
        last = DataInterval(utc(2022, 1, 1), utc(2022, 1, 2))
        first = runs(CronDataIntervalTimetable("@daily", "UTC"), catchup=False, n=1, last=last)
        assert first == [("2024-05-14T00:00:00+00:00", "2024-05-15T00:00:00+00:00", "2024-05-15T00:00:00+00:00")]

    def test_cron_trigger_runs_most_recent_fire_time_then_future_ones(self):
        assert runs(CronTriggerTimetable("@daily", timezone="UTC"), catchup=False) == [
            ("2024-05-15T00:00:00+00:00", "2024-05-15T00:00:00+00:00", "2024-05-15T00:00:00+00:00"),
            ("2024-05-16T00:00:00+00:00", "2024-05-16T00:00:00+00:00", "2024-05-16T00:00:00+00:00"),
            ("2024-05-17T00:00:00+00:00", "2024-05-17T00:00:00+00:00", "2024-05-17T00:00:00+00:00"),
        ]

    def test_cron_trigger_with_interval_covers_the_period_before_the_fire_time(self):
        timetable = CronTriggerTimetable("0 * * * *", timezone="UTC", interval=datetime.timedelta(hours=1))
        assert runs(timetable, catchup=False, n=1) == [
            ("2024-05-15T09:00:00+00:00", "2024-05-15T10:00:00+00:00", "2024-05-15T10:00:00+00:00")
        ]

    def test_cron_trigger_after_last_run_in_the_past_jumps_to_now(self):
        last = DataInterval(utc(2023, 1, 1), utc(2023, 1, 1))
        assert runs(CronTriggerTimetable("@daily", timezone="UTC"), catchup=False, n=1, last=last) == [
            ("2024-05-15T00:00:00+00:00", "2024-05-15T00:00:00+00:00", "2024-05-15T00:00:00+00:00")
        ]

    def test_delta_data_interval_uses_epoch_grid(self):
        assert runs(DeltaDataIntervalTimetable(datetime.timedelta(days=1)), catchup=False, n=2) == [
            ("2024-05-14T00:00:00+00:00", "2024-05-15T00:00:00+00:00", "2024-05-15T00:00:00+00:00"),
            ("2024-05-15T00:00:00+00:00", "2024-05-16T00:00:00+00:00", "2024-05-16T00:00:00+00:00"),
        ]

    def test_delta_trigger_fires_now_then_every_delta(self):
        assert runs(DeltaTriggerTimetable(datetime.timedelta(hours=6)), catchup=False) == [
            ("2024-05-15T10:30:00+00:00", "2024-05-15T10:30:00+00:00", "2024-05-15T10:30:00+00:00"),
            ("2024-05-15T16:30:00+00:00", "2024-05-15T16:30:00+00:00", "2024-05-15T16:30:00+00:00"),
            ("2024-05-15T22:30:00+00:00", "2024-05-15T22:30:00+00:00", "2024-05-15T22:30:00+00:00"),
        ]


class TestRunImmediately:
    """run_immediately decides the first run of a DAG without a start date."""

    @pytest.mark.parametrize(
        ("run_immediately", "now", "expected_first"),
        [
            (False, utc(2024, 5, 15, 10, 30), "2024-05-15T11:00:00+00:00"),
            (False, utc(2024, 5, 15, 10, 2), "2024-05-15T10:00:00+00:00"),  # within the 5-minute floor
            (True, utc(2024, 5, 15, 10, 59), "2024-05-15T10:00:00+00:00"),
            (datetime.timedelta(minutes=45), utc(2024, 5, 15, 10, 30), "2024-05-15T10:00:00+00:00"),
            (datetime.timedelta(minutes=15), utc(2024, 5, 15, 10, 30), "2024-05-15T11:00:00+00:00"),
            (None, utc(2024, 5, 15, 10, 6), "2024-05-15T10:00:00+00:00"),  # 10% of an hour
            (None, utc(2024, 5, 15, 10, 7), "2024-05-15T11:00:00+00:00"),
        ],
    )
    @pytest.mark.parametrize("catchup", [True, False])
    def test_first_run_without_start_date(self, run_immediately, now, expected_first, catchup):
        timetable = CronTriggerTimetable("0 * * * *", timezone="UTC", run_immediately=run_immediately)
        first = runs(timetable, start=None, catchup=catchup, now=now, n=1)
        assert first == [(expected_first, expected_first, expected_first)]

    def test_daily_buffer_is_ten_percent_of_the_gap(self):
        timetable = CronTriggerTimetable("@daily", timezone="UTC", run_immediately=None)
        assert runs(timetable, start=None, catchup=False, now=utc(2024, 5, 15, 2, 24), n=1)[0][2] == (
            "2024-05-15T00:00:00+00:00"
        )
        assert runs(timetable, start=None, catchup=False, now=utc(2024, 5, 15, 2, 25), n=1)[0][2] == (
            "2024-05-16T00:00:00+00:00"
        )

    def test_has_no_effect_with_a_start_date(self):
        timetable = CronTriggerTimetable("0 * * * *", timezone="UTC", run_immediately=True)
        assert runs(timetable, start=utc(2024, 5, 15, 10, 15), catchup=False, n=1)[0][2] == (
            "2024-05-15T11:00:00+00:00"
        )


class TestEndDate:
    @pytest.mark.parametrize(
        "timetable",
        [
            CronDataIntervalTimetable("@daily", "UTC"),
            CronTriggerTimetable("@daily", timezone="UTC"),
            DeltaDataIntervalTimetable(datetime.timedelta(days=1)),
            DeltaTriggerTimetable(datetime.timedelta(days=1)),
        ],
        ids=type,
    )
    def test_end_date_is_inclusive_on_the_logical_date(self, timetable):
        scheduled = runs(timetable, end=utc(2021, 1, 3), n=10)
        assert [r[0] for r in scheduled] == [
            "2021-01-01T00:00:00+00:00",
            "2021-01-02T00:00:00+00:00",
            "2021-01-03T00:00:00+00:00",
        ]

    def test_trigger_end_date_applies_to_fire_time_not_interval_start(self):
        timetable = CronTriggerTimetable("@daily", timezone="UTC", interval=datetime.timedelta(days=1))
        scheduled = runs(timetable, end=utc(2021, 1, 2), n=10)
        assert [r[2] for r in scheduled] == ["2021-01-01T00:00:00+00:00", "2021-01-02T00:00:00+00:00"]

    def test_end_before_start_schedules_nothing(self):
        assert runs(CronTriggerTimetable("@daily", timezone="UTC"), end=utc(2020, 12, 31)) == []


class TestSimple:
    @pytest.mark.parametrize("catchup", [True, False])
    def test_once_runs_once_at_start_date(self, catchup):
        assert runs(OnceTimetable(), catchup=catchup, n=5) == [
            ("2021-01-01T00:00:00+00:00", "2021-01-01T00:00:00+00:00", "2021-01-01T00:00:00+00:00")
        ]

    def test_once_without_a_start_date_runs_once_now(self):
        """Airflow 3: with no start date the DAG is ready at once (issue 17: it used to never run)."""
        assert runs(OnceTimetable(), start=None, n=5) == [
            ("2024-05-15T10:30:00+00:00", "2024-05-15T10:30:00+00:00", "2024-05-15T10:30:00+00:00")
        ]
        assert runs(OnceTimetable(), start=None, last=DataInterval(START, START)) == []

    def test_once_respects_end_date(self):
        assert runs(OnceTimetable(), end=utc(2020, 1, 1)) == []

    def test_once_after_a_run_never_again(self):
        assert runs(OnceTimetable(), last=DataInterval(START, START)) == []

    @pytest.mark.parametrize("catchup", [True, False])
    def test_none_never_runs(self, catchup):
        assert runs(NullTimetable(), catchup=catchup) == []
        assert NullTimetable().can_be_scheduled is False

    def test_continuous_first_run_spans_start_to_now(self):
        assert runs(ContinuousTimetable(), n=5) == [
            ("2021-01-01T00:00:00+00:00", "2024-05-15T10:30:00+00:00", "2024-05-15T10:30:00+00:00")
        ]

    def test_continuous_next_run_starts_where_the_last_ended(self):
        last = DataInterval(utc(2024, 5, 15, 9), utc(2024, 5, 15, 10))
        restriction = TimeRestriction(earliest=START, latest=None, catchup=True)
        with frozen_now(NOW):
            info = ContinuousTimetable().next_dagrun_info(last_automated_data_interval=last, restriction=restriction)
        assert info.data_interval == DataInterval(utc(2024, 5, 15, 10), NOW)

    def test_continuous_limits_active_runs(self):
        assert ContinuousTimetable.active_runs_limit == 1
        assert ContinuousTimetable().periodic is False


class TestDeltaSchedules:
    def test_delta_data_interval_catchup(self):
        assert runs(DeltaDataIntervalTimetable(datetime.timedelta(hours=12))) == [
            ("2021-01-01T00:00:00+00:00", "2021-01-01T12:00:00+00:00", "2021-01-01T12:00:00+00:00"),
            ("2021-01-01T12:00:00+00:00", "2021-01-02T00:00:00+00:00", "2021-01-02T00:00:00+00:00"),
            ("2021-01-02T00:00:00+00:00", "2021-01-02T12:00:00+00:00", "2021-01-02T12:00:00+00:00"),
        ]

    def test_relativedelta_months(self):
        assert [r[0] for r in runs(DeltaDataIntervalTimetable(relativedelta(months=1)), start=utc(2021, 1, 31))] == [
            "2021-01-31T00:00:00+00:00",
            "2021-02-28T00:00:00+00:00",
            "2021-03-28T00:00:00+00:00",
        ]

    def test_delta_trigger_catchup_starts_at_start_date(self):
        timetable = DeltaTriggerTimetable(datetime.timedelta(hours=6), interval=datetime.timedelta(hours=6))
        assert runs(timetable) == [
            ("2020-12-31T18:00:00+00:00", "2021-01-01T00:00:00+00:00", "2021-01-01T00:00:00+00:00"),
            ("2021-01-01T00:00:00+00:00", "2021-01-01T06:00:00+00:00", "2021-01-01T06:00:00+00:00"),
            ("2021-01-01T06:00:00+00:00", "2021-01-01T12:00:00+00:00", "2021-01-01T12:00:00+00:00"),
        ]

    def test_manual_intervals(self):
        at = utc(2024, 5, 15, 10, 30)
        assert DeltaDataIntervalTimetable(datetime.timedelta(hours=1)).infer_manual_data_interval(
            run_after=at
        ) == DataInterval(utc(2024, 5, 15, 9, 30), at)
        assert DeltaTriggerTimetable(datetime.timedelta(hours=1)).infer_manual_data_interval(
            run_after=at
        ) == DataInterval(at, at)
        assert OnceTimetable().infer_manual_data_interval(run_after=at) == DataInterval(at, at)


class TestPlanning:
    def test_stops_at_n(self):
        assert len(runs(CronTriggerTimetable("@hourly", timezone="UTC"), n=7)) == 7

    def test_continues_after_given_last_interval(self):
        last = DataInterval(utc(2021, 1, 5), utc(2021, 1, 6))
        assert runs(CronDataIntervalTimetable("@daily", "UTC"), last=last, n=1)[0][0] == "2021-01-06T00:00:00+00:00"

    def test_now_is_only_pinned_inside_the_call(self):
        next_dagruns(NullTimetable(), start_date=START, end_date=None, catchup=True, n=1, now=utc(2000, 1, 1))
        assert utcnow().year > 2000

    def test_naive_start_date_is_read_as_utc(self):
        scheduled = next_dagruns(
            CronTriggerTimetable("@daily", timezone="UTC"),
            start_date=datetime.datetime(2021, 1, 1),
            end_date=None,
            catchup=True,
            n=1,
        )
        assert scheduled[0].run_after == START
