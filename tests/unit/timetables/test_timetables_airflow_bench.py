"""Every case Airflow 3.3.2 computed (shared/notes/airflow-bench) must come out identical here."""

from __future__ import annotations

import datetime
import json
from typing import Any

import pendulum
import pytest
from timetables_helpers import BENCH_COPY, BENCH_ORIGINAL, utc

from updraft.timetables import (
    CronDataIntervalTimetable,
    CronTriggerTimetable,
    Timetable,
    create_timetable,
    next_dagruns,
)

CASES: dict[str, Any] = {
    "CronDataIntervalTimetable('0 0 * * 1-5', UTC)": lambda: CronDataIntervalTimetable("0 0 * * 1-5", "UTC"),
    "CronDataIntervalTimetable('@daily', UTC)": lambda: CronDataIntervalTimetable("@daily", "UTC"),
    "CronTriggerTimetable('@daily', UTC)": lambda: CronTriggerTimetable("@daily", timezone="UTC"),
    "CronTriggerTimetable('0 0 * * 1-5', UTC)": lambda: CronTriggerTimetable("0 0 * * 1-5", timezone="UTC"),
    "CronTriggerTimetable('0 0 * * 1-5', UTC, interval=1 day)": lambda: CronTriggerTimetable(
        "0 0 * * 1-5", timezone="UTC", interval=datetime.timedelta(days=1)
    ),
    "AfterWorkdayTimetable (docs example, no holidays)": "workday",
}


def _build(name: str, workday_module) -> Timetable:
    factory = CASES[name]
    if factory == "workday":
        return workday_module.AfterWorkdayTimetable()
    return factory()


def _as_dicts(runs) -> list[dict[str, str]]:
    return [
        {
            "data_interval_start": r.data_interval.start.isoformat(),
            "data_interval_end": r.data_interval.end.isoformat(),
            "run_after": r.run_after.isoformat(),
        }
        for r in runs
    ]


def test_copy_matches_shared_original():
    if not BENCH_ORIGINAL.exists():
        pytest.skip("shared/ is not beside this checkout")
    assert json.loads(BENCH_COPY.read_text()) == json.loads(BENCH_ORIGINAL.read_text())


def test_every_bench_case_is_covered(bench):
    assert set(bench["timetables"]) == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_first_8_runs_with_catchup(name, bench, workday_module):
    expected = bench["timetables"][name]["first_8"]
    start = pendulum.parse(bench["start_date"])
    runs = next_dagruns(_build(name, workday_module), start_date=start, end_date=None, catchup=bench["catchup"], n=8)
    assert _as_dicts(runs) == expected


@pytest.mark.parametrize("name", sorted(CASES))
def test_manual_run_inference(name, bench, workday_module):
    timetable = _build(name, workday_module)
    manual = {k: v for k, v in bench["timetables"][name].items() if k.startswith("manual_")}
    assert manual
    for case, expected in manual.items():
        interval = timetable.infer_manual_data_interval(run_after=pendulum.parse(expected["run_after"]))
        assert (interval.start.isoformat(), interval.end.isoformat()) == (
            expected["data_interval_start"],
            expected["data_interval_end"],
        ), case


@pytest.mark.parametrize("name", sorted(CASES))
def test_summary(name, bench, workday_module):
    assert _build(name, workday_module).summary == bench["timetables"][name]["summary"]


@pytest.mark.parametrize("schedule", ["0 0 * * 1-5", "@daily"])
def test_default_timetable_for_schedule_string(schedule, bench):
    expected_class = bench["default_timetable_for_schedule_string"][schedule].rsplit(".", 1)[1]
    timetable = create_timetable(schedule, "UTC")
    assert type(timetable).__name__ == expected_class == "CronTriggerTimetable"


def test_bench_start_is_2021_in_utc(bench):
    assert pendulum.parse(bench["start_date"]) == utc(2021, 1, 1)
