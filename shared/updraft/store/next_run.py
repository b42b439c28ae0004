"""A DAG's next run from its serialized form, computed the way the scheduler computes it.

The parser stores each DAG's first next run so ``due_dags`` can find it without loading the DAG; the
scheduler later advances it with the same timetable call. Both go through :func:`next_run_info` so the two
can never disagree about start/end dates or catchup.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from typing import Any

from updraft.timetables._time import coerce_datetime
from updraft.timetables.base import DagRunInfo, DataInterval, TimeRestriction
from updraft.timetables.planning import next_dagruns


def time_restriction(sdag: Any) -> TimeRestriction:
    """Airflow's ``DAG._time_restriction``: earliest of the DAG's and tasks' start dates; the latest end date
    only when every task has one (a task without an end date keeps the DAG open-ended)."""
    start_dates = [t.start_date for t in sdag.tasks if t.start_date]
    if sdag.start_date is not None:
        start_dates.append(sdag.start_date)
    earliest = coerce_datetime(min(start_dates)) if start_dates else None
    latest = coerce_datetime(sdag.end_date) if sdag.end_date is not None else None
    end_dates = [t.end_date for t in sdag.tasks if t.end_date]
    if sdag.tasks and len(end_dates) == len(sdag.tasks):
        if sdag.end_date is not None:
            end_dates.append(sdag.end_date)
        latest = coerce_datetime(max(end_dates))
    return TimeRestriction(earliest, latest, sdag.catchup)


def next_run_info(sdag: Any, *, last_automated: DataInterval | None, now: dt.datetime) -> DagRunInfo | None:
    """The run after ``last_automated`` (None: the DAG never ran), with the clock pinned to ``now``."""
    timetable = sdag.timetable
    if timetable is None or not getattr(timetable, "can_be_scheduled", True):
        return None
    restriction = time_restriction(sdag)
    runs = next_dagruns(timetable, start_date=restriction.earliest, end_date=restriction.latest,
                        catchup=restriction.catchup, last_automated_data_interval=last_automated, n=1, now=now)
    return runs[0] if runs else None


def schedule_key(document: dict[str, Any], sdag: Any) -> str:
    """Changes exactly when the first next run could change: the timetable's stored form or the bounds."""
    restriction = time_restriction(sdag)
    body = {
        "timetable": document.get("dag", {}).get("timetable"),
        "earliest": restriction.earliest.isoformat() if restriction.earliest else None,
        "latest": restriction.latest.isoformat() if restriction.latest else None,
        "catchup": restriction.catchup,
    }
    return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()[:32]
