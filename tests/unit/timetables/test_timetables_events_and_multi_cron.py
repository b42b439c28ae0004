from __future__ import annotations

import datetime

import pytest
from timetables_helpers import iso, plan, utc

from updraft.timetables import (
    DataInterval,
    EventsTimetable,
    MultipleCronTriggerTimetable,
)

EVENTS = [utc(2021, 3, 1), utc(2021, 1, 15, 12), utc(2021, 2, 1)]


class TestEventsTimetable:
    def test_events_are_sorted_and_run_at_exact_instants(self):
        runs = plan(EventsTimetable(EVENTS))
        assert [r.run_after for r in runs] == sorted(EVENTS)
        assert all(r.data_interval == DataInterval(r.run_after, r.run_after) for r in runs)

    def test_presorted_trusts_the_given_order(self):
        assert EventsTimetable(EVENTS, presorted=True).event_dates == EVENTS
        assert EventsTimetable(EVENTS).event_dates == sorted(EVENTS)

    def test_start_and_end_dates_bound_events(self):
        runs = plan(EventsTimetable(EVENTS), start=utc(2021, 1, 20), end=utc(2021, 2, 28))
        assert [r.run_after for r in runs] == [utc(2021, 2, 1)]

    def test_catchup_false_skips_past_events(self):
        runs = plan(EventsTimetable(EVENTS), catchup=False, now=utc(2021, 2, 1, 0, 0, 1))
        assert [r.run_after for r in runs] == [utc(2021, 3, 1)]

    def test_duplicates_run_once(self):
        runs = plan(EventsTimetable([utc(2021, 2, 1), utc(2021, 2, 1)]))
        assert [r.run_after for r in runs] == [utc(2021, 2, 1)]

    def test_no_more_events(self):
        assert plan(EventsTimetable(EVENTS), last=DataInterval(utc(2021, 3, 1), utc(2021, 3, 1))) == []
        assert plan(EventsTimetable([])) == []

    @pytest.mark.parametrize(
        ("run_after", "expected"),
        [
            (utc(2020, 6, 1), utc(2021, 1, 15, 12)),  # before all events: the first one
            (utc(2021, 2, 10), utc(2021, 2, 1)),  # the most recent past event
            (utc(2021, 2, 1), utc(2021, 2, 1)),
            (utc(2022, 1, 1), utc(2021, 3, 1)),
        ],
    )
    def test_manual_runs_restricted_to_events(self, run_after, expected):
        timetable = EventsTimetable(EVENTS, restrict_to_events=True)
        assert timetable.infer_manual_data_interval(run_after=run_after) == DataInterval(expected, expected)

    def test_manual_runs_unrestricted_use_trigger_time(self):
        at = utc(2021, 2, 10)
        assert EventsTimetable(EVENTS).infer_manual_data_interval(run_after=at) == DataInterval(at, at)

    def test_description_and_summary(self):
        timetable = EventsTimetable(EVENTS)
        assert timetable.summary == "3 events"
        assert timetable.description == "3 events between 2021-01-15 12:00:00+00:00 and 2021-03-01 00:00:00+00:00"
        assert EventsTimetable([]).description == "No events"
        named = EventsTimetable(EVENTS, description="Match days")
        assert named.summary == named.description == "Match days"

    def test_naive_events_are_read_as_utc(self):
        timetable = EventsTimetable([datetime.datetime(2021, 2, 1)])
        assert timetable.event_dates == [utc(2021, 2, 1)]


class TestMultipleCronTriggerTimetable:
    def test_fires_on_any_expression_once_per_instant(self):
        timetable = MultipleCronTriggerTimetable("0 0 * * *", "0 12 * * 1-5", "0 0 * * 1", timezone="UTC")
        assert [r[2] for r in iso(plan(timetable, n=6))] == [
            "2021-01-01T00:00:00+00:00",  # Friday
            "2021-01-01T12:00:00+00:00",
            "2021-01-02T00:00:00+00:00",
            "2021-01-03T00:00:00+00:00",
            "2021-01-04T00:00:00+00:00",  # Monday: two expressions, one run
            "2021-01-04T12:00:00+00:00",
        ]

    def test_catchup_false_takes_latest_past_fire_time(self):
        timetable = MultipleCronTriggerTimetable("0 0 * * *", "0 12 * * 1-5", timezone="UTC")
        runs = plan(timetable, catchup=False, now=utc(2021, 1, 4, 13), n=2)
        assert [r.run_after for r in runs] == [utc(2021, 1, 4, 12), utc(2021, 1, 5)]

    def test_interval_and_manual_inference(self):
        timetable = MultipleCronTriggerTimetable(
            "0 0 * * *", "0 12 * * *", timezone="UTC", interval=datetime.timedelta(hours=1)
        )
        first = plan(timetable, n=1)[0]
        assert first.data_interval == DataInterval(utc(2020, 12, 31, 23), utc(2021, 1, 1))
        at = utc(2021, 1, 1, 5)
        assert timetable.infer_manual_data_interval(run_after=at) == DataInterval(utc(2021, 1, 1, 4), at)

    def test_summary_and_description(self):
        timetable = MultipleCronTriggerTimetable("@daily", "0 12 * * 1-5", timezone="UTC")
        assert timetable.summary == "0 0 * * *, 0 12 * * 1-5"
        assert timetable.description == "At 00:00, At 12:00, Monday through Friday"

    def test_needs_an_expression(self):
        with pytest.raises(ValueError, match="cron expression required"):
            MultipleCronTriggerTimetable(timezone="UTC")
