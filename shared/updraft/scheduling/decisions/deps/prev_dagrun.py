"""Airflow's ``PrevDagrunDep``: ``depends_on_past`` / ``wait_for_downstream`` / ``ignore_first_depends_on_past``.

The caller hands in the previous run's task instances (``PreviousRun``), or None when the DAG has no previous
run; which run counts as "previous" (the previous scheduled run under catchup, else the previous run) is the
caller's read, as in Airflow. "Successful" means success or skipped; anything else, unfinished included, blocks.

One difference from Airflow comes from storage: Airflow creates every task instance row when a run is created,
so "no row" means the task did not exist then; in Updraft an absent item is also a task nobody touched yet. An
absent previous instance therefore blocks, unless ``ignore_first_depends_on_past`` is set (Airflow would also
look at runs before the previous one for that case; here only the previous run is consulted).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from updraft.model.records import TaskInstance
from updraft.model.states import SUCCESS_TI_STATES
from updraft.scheduling.decisions.deps.base import DepStatus, failing, passing
from updraft.serialization.model import SerializedTask

NAME = "Previous Dagrun State"


@dataclass(frozen=True)
class PreviousRun:
    tis: Sequence[TaskInstance]
    logical_date: dt.datetime | None = None


def depends_on_past(task: SerializedTask) -> bool:
    """``wait_for_downstream`` implies ``depends_on_past`` in Airflow's operator constructor."""
    return bool(task.depends_on_past or task.wait_for_downstream)


def prev_dagrun_status(task: SerializedTask, *, catchup: bool, previous: PreviousRun | None) -> DepStatus:
    if not depends_on_past(task):
        return passing(NAME, "The task did not have depends_on_past set.")
    if previous is None:
        return passing(NAME, "This task instance was the first task instance for its task.")
    if (catchup and task.start_date is not None and previous.logical_date is not None
            and previous.logical_date < task.start_date):
        return passing(NAME, "This task instance was the first task instance for its task.")
    own = [ti for ti in previous.tis if ti.task_id == task.task_id]
    if not own:
        if task.ignore_first_depends_on_past:
            return passing(NAME, "ignore_first_depends_on_past is true for this task and it is the first task "
                                 "instance for its task.")
        return failing(NAME, "depends_on_past is true for this task's DAG, but the previous task instance has not "
                             "run yet.")
    unsuccessful = sum(1 for ti in own if ti.state not in SUCCESS_TI_STATES)
    if unsuccessful:
        return failing(NAME, f"depends_on_past is true for this task, but {unsuccessful} previous task "
                             f"instance(s) are not in a successful state.")
    if task.wait_for_downstream and _has_unsuccessful_dependants(task, previous.tis):
        return failing(NAME, "The tasks downstream of the previous task instance(s) haven't completed, and "
                             "wait_for_downstream is True.")
    return passing(NAME, "The previous task instance(s) succeeded.")


def _has_unsuccessful_dependants(task: SerializedTask, tis: Sequence[TaskInstance]) -> bool:
    downstream = set(task.downstream_task_ids)
    seen = {ti.task_id for ti in tis if ti.task_id in downstream}
    if downstream - seen:
        return True  # never touched in that run: "no status", which is not a success
    return any(ti.state not in SUCCESS_TI_STATES for ti in tis if ti.task_id in downstream)
