"""A custom timetable's horizon on the DAG row: the scheduler makes runs from it without the timetable's class, asks
the parser for more when it runs low, and late, duplicate or stale evaluations neither lose nor duplicate a run."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pendulum
from store_helpers import T0, dag_doc, parsed_file

from updraft.model.parse_results import HORIZON_KEY
from updraft.parsing.timetable_horizons import contexts_for
from updraft.scheduling.commands.dag_registration import register_parsed_file, set_paused
from updraft.scheduling.pass_report import PassReport
from updraft.scheduling.run_creation import last_automated_interval
from updraft.scheduling.scheduler import Scheduler
from updraft.timetables.base import DagRunInfo, DataInterval, TimeRestriction, Timetable
from updraft.timetables.evaluated import Horizon, evaluate_horizon
from updraft.timetables.planning import next_dagruns

LATER = pendulum.datetime(2030, 1, 1, tz="UTC")  # every run of the tests is due
PATH = "never_loaded.Weekdays"  # no plugin registers it here: the store's side never has the class


class Weekdays(Timetable):
    """Daily intervals on weekdays, run when the interval ends (the shape of Airflow's AfterWorkdayTimetable)."""

    def infer_manual_data_interval(self, *, run_after):
        start = run_after.start_of("day").subtract(days=1)
        while start.weekday() >= 5:
            start = start.subtract(days=1)
        return DataInterval(start, start.add(days=1))

    def next_dagrun_info(self, *, last_automated_data_interval, restriction):
        start = last_automated_data_interval.end if last_automated_data_interval else restriction.earliest
        while start.weekday() >= 5:
            start = start.add(days=1)
        return DagRunInfo.interval(start, start.add(days=1))


RESTRICTION = TimeRestriction(earliest=T0, latest=None, catchup=True)


def _evaluated(anchor: DataInterval | None) -> dict[str, Any]:
    """The parser's work: the live timetable's next 4 runs after ``anchor``."""
    return evaluate_horizon(Weekdays(), RESTRICTION, anchor=anchor, now=T0, size=4).to_dict()


def _parse(store, horizon: dict[str, Any]):
    doc = dag_doc("wd", schedule="@daily", catchup=True)
    doc["dag"]["timetable"] = {"__type": PATH, "__var": {}}
    doc[HORIZON_KEY] = horizon
    return register_parsed_file(store, parsed_file("wd.py", doc), now=T0)


def _tick(store) -> list[str]:
    asked: list[str] = []
    scheduler = Scheduler(store, executor=None, clock=lambda: LATER)  # type: ignore[arg-type]
    scheduler.evaluate_timetables = asked.append
    scheduler.create_due_runs(PassReport())
    return asked


def _logical_dates(store) -> list[dt.datetime]:
    return sorted(run.logical_date for run in store.list_runs("wd"))


def test_runs_come_from_the_horizon_and_a_refresh_continues_them_exactly(store):
    first = _evaluated(None)
    assert _parse(store, first).stored == ["wd"]
    set_paused(store, "wd", False)
    assert _tick(store) == ["wd.py"]  # the 4 runs made leave nothing ahead: the parser is asked (once a pass)
    assert len(_logical_dates(store)) == 4
    meta = store.get_dag_meta("wd")
    assert meta.next_dagrun_logical_date is None  # the horizon ran out: nothing due until the parser answers

    # The parser re-runs the file from the row's last automated interval; the same answer delivered twice.
    # What the parser's parent hands the child: the row's last automated interval, for the file's DAGs.
    last = last_automated_interval(meta)
    assert json.loads(contexts_for(store, ["wd.py", "other.py"])["wd.py"])["anchors"] == {
        "wd": [last.start.isoformat(), last.end.isoformat()]}
    again = _evaluated(last)
    assert _parse(store, again).stored == ["wd"]
    assert _parse(store, again).unchanged == ["wd"]
    # A stale evaluation (from the first anchor) arriving late does not replace the newer horizon.
    _parse(store, first)
    assert store.get_dag_meta("wd").timetable_horizon == again
    _tick(store)
    _tick(store)  # a second scheduler tick over the same horizon makes nothing twice
    live = next_dagruns(Weekdays(), start_date=T0, end_date=None, catchup=True, n=8)
    assert _logical_dates(store) == [info.logical_date for info in live]


def test_the_scheduler_asks_early_while_runs_are_left():
    horizon = Horizon.from_dict(_evaluated(None))
    assert horizon.running_low(None)  # 4 runs ahead: no more than the 8 the scheduler wants left
    assert horizon.covers(horizon.runs[0].data_interval) and horizon.after(horizon.runs[-1].data_interval) is None
    assert not horizon.covers(horizon.runs[-1].data_interval)  # the end of the chain: ask again
    assert not horizon.covers(DataInterval(LATER, LATER))  # an interval not on the chain: ask again
