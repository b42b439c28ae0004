"""Preview upcoming runs of a schedule, the way the scheduler would create them for a new DAG.

The scheduler asks the timetable for one run at a time, feeding back the previous run's data interval
and the same :class:`TimeRestriction` (start date, end date, catchup) on every call; this module does
that in a loop, so ``updraft dags next-execution`` shows exactly the runs the scheduler will create.
"""

from __future__ import annotations

import contextlib
import datetime
from typing import TYPE_CHECKING

from updraft.timetables._time import coerce_datetime, frozen_now
from updraft.timetables.base import DagRunInfo, DataInterval, TimeRestriction

if TYPE_CHECKING:
    from updraft.timetables.base import Timetable

__all__ = ["next_dagruns"]


def next_dagruns(
    timetable: Timetable,
    *,
    start_date: datetime.datetime | None,
    end_date: datetime.datetime | None,
    catchup: bool,
    last_automated_data_interval: DataInterval | None = None,
    n: int,
    now: datetime.datetime | None = None,
) -> list[DagRunInfo]:
    """Up to *n* runs following *last_automated_data_interval* (None: the DAG has never run).

    *now* pins the clock that ``catchup=False`` schedules consult, so a preview is repeatable; by default
    the real clock is read. The list stops early when the timetable has no further run, or when the next
    run would not start later than the previous one (``@continuous`` only advances as real time passes).
    """
    restriction = TimeRestriction(
        earliest=coerce_datetime(start_date) if start_date is not None else None,
        latest=coerce_datetime(end_date) if end_date is not None else None,
        catchup=catchup,
    )
    runs: list[DagRunInfo] = []
    last = last_automated_data_interval
    clock = frozen_now(now) if now is not None else contextlib.nullcontext()
    with clock:
        while len(runs) < n:
            info = timetable.next_dagrun_info(last_automated_data_interval=last, restriction=restriction)
            if info is None:
                break
            if runs and info.run_after <= runs[-1].run_after:
                # The scheduler would only create this once real time moves on (``@continuous``).
                break
            runs.append(info)
            last = info.data_interval
    return runs
