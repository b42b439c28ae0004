"""The order in which scheduled instances are claimed: Airflow's executable-instances query order.

``ORDER BY priority_weight DESC, dag_run.logical_date, map_index``: the highest effective priority first, then
the oldest run, then the lowest map index. A run without a logical date sorts after dated ones (PostgreSQL puts
NULLs last in ascending order); the remaining ties are broken by dag, run and task id so every scheduler
invocation tries the same candidates in the same order.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from updraft.model.records import DagRun, TaskInstance

_FAR_FUTURE = dt.datetime.max.replace(tzinfo=dt.UTC)


def claim_order(tis: Iterable[TaskInstance], runs: Iterable[DagRun]) -> list[TaskInstance]:
    logical = {(r.dag_id, r.run_id): r.logical_date for r in runs}

    def sort_key(ti: TaskInstance) -> tuple[int, bool, dt.datetime, int, str, str, str]:
        date = logical.get((ti.dag_id, ti.run_id))
        if date is not None and date.tzinfo is None:
            date = date.replace(tzinfo=dt.UTC)
        return (-ti.priority_weight, date is None, date or _FAR_FUTURE, ti.map_index, ti.dag_id, ti.run_id,
                ti.task_id)

    return sorted(tis, key=sort_key)
