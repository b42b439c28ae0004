"""Paths and small builders shared by the timetable tests (a uniquely named module, unlike conftest)."""

from __future__ import annotations

from pathlib import Path

import pendulum

from updraft.timetables import next_dagruns

HERE = Path(__file__).parent
BENCH_NAME = "timetables_airflow_3.3.2.json"
# The copy travels with the repository; the original sits in shared/ beside the repository.
BENCH_COPY = HERE / "data" / BENCH_NAME
BENCH_ORIGINAL = Path(__file__).parents[3] / ".." / "shared" / "notes" / "airflow-bench" / BENCH_NAME
PLUGINS_FOLDER = Path(__file__).resolve().parents[3] / "examples" / "plugins"


def utc(*args: int) -> pendulum.DateTime:
    return pendulum.datetime(*args, tz="UTC")


def berlin(*args: int) -> pendulum.DateTime:
    return pendulum.datetime(*args, tz="Europe/Berlin")


START = utc(2021, 1, 1)


def plan(timetable, *, start=START, end=None, catchup=True, n=10, now=None, last=None):
    """``next_dagruns`` with the test defaults: from START, catching up, with the real clock unless ``now``."""
    return next_dagruns(
        timetable,
        start_date=start,
        end_date=end,
        catchup=catchup,
        n=n,
        now=now,
        last_automated_data_interval=last,
    )


def iso(runs) -> list[tuple[str, str, str]]:
    """(data_interval_start, data_interval_end, run_after) in UTC ISO form, for readable assertions."""
    return [
        (
            r.data_interval.start.in_timezone("UTC").isoformat(),
            r.data_interval.end.in_timezone("UTC").isoformat(),
            r.run_after.in_timezone("UTC").isoformat(),
        )
        for r in runs
    ]
