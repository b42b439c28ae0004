"""A custom timetable replayed from the parser's evaluation (no class loaded) gives Airflow 3.3.2's own answers:
the bench's first runs and manual intervals of the docs' AfterWorkdayTimetable, through a horizon that travelled
as JSON and a timetable decoded where its plugin is not registered."""

from __future__ import annotations

import json

import pendulum
import pytest

import updraft.plugins
from updraft.scheduling.run_creation import timetable_of
from updraft.timetables import TimeRestriction, decode_timetable, encode_timetable, next_dagruns
from updraft.timetables.evaluated import EvaluatedTimetable, ManualIntervalNotEvaluated, evaluate_horizon

NAME = "AfterWorkdayTimetable (docs example, no holidays)"


@pytest.fixture
def replayed(bench, workday_module, monkeypatch: pytest.MonkeyPatch):
    """The workday timetable as the scheduler sees it: evaluated in 'the child', decoded without the plugin."""
    live = workday_module.AfterWorkdayTimetable()
    start = pendulum.parse(bench["start_date"])
    manual_at = [pendulum.parse(case["run_after"]) for key, case in bench["timetables"][NAME].items()
                 if key.startswith("manual_")]
    horizon = evaluate_horizon(live, TimeRestriction(start, None, bench["catchup"]), anchor=None,
                               now=pendulum.datetime(2021, 1, 1, tz="UTC"), manual_at=manual_at)
    encoded = json.loads(json.dumps(encode_timetable(live)))
    monkeypatch.setattr(updraft.plugins, "_plugins", {})  # the scheduler's process: no plugin loaded
    timetable = decode_timetable(encoded, unloaded_ok=True)
    assert isinstance(timetable, EvaluatedTimetable)
    return timetable.with_horizon(json.loads(json.dumps(horizon.to_dict())))


def test_first_runs_are_airflows(bench, replayed):
    expected = bench["timetables"][NAME]["first_8"]
    runs = next_dagruns(replayed, start_date=pendulum.parse(bench["start_date"]), end_date=None,
                        catchup=bench["catchup"], n=8)
    assert [{"data_interval_start": r.data_interval.start.isoformat(),
             "data_interval_end": r.data_interval.end.isoformat(), "run_after": r.run_after.isoformat()}
            for r in runs] == expected


def test_manual_intervals_are_airflows(bench, replayed):
    for case, expected in bench["timetables"][NAME].items():
        if case.startswith("manual_"):
            interval = replayed.infer_manual_data_interval(run_after=pendulum.parse(expected["run_after"]))
            assert (interval.start.isoformat(), interval.end.isoformat()) == (
                expected["data_interval_start"], expected["data_interval_end"]), case


def test_labels_and_between_runs_manual_intervals(bench, replayed, workday_module):
    live = workday_module.AfterWorkdayTimetable()
    assert (replayed.summary, replayed.type_name) == (bench["timetables"][NAME]["summary"], live.type_name)
    sunday = pendulum.datetime(2021, 1, 10, 15, tz="UTC")  # within the evaluated spans, asked of nobody
    assert replayed.infer_manual_data_interval(run_after=sunday) == live.infer_manual_data_interval(run_after=sunday)
    with pytest.raises(ManualIntervalNotEvaluated, match="not evaluated for a manual run at 2035"):
        replayed.infer_manual_data_interval(run_after=pendulum.datetime(2035, 1, 1, tz="UTC"))


def test_the_scheduler_gets_the_replay_and_no_horizon_means_no_run(replayed):
    bare = EvaluatedTimetable(replayed.timetable, {})
    restriction = TimeRestriction(None, None, True)
    assert bare.next_dagrun_info(last_automated_data_interval=None, restriction=restriction) is None
    dag = type("Dag", (), {"timetable": bare})()
    assert timetable_of(dag, replayed.horizon.to_dict()).horizon == replayed.horizon  # type: ignore[attr-defined]
