"""What a user's mark changes (Airflow's ``mark_tasks``): a run marked success/failed, or task instances set to
success/failed/skipped, decided from what is stored, without AWS.

Each change is a :class:`TIChange` fenced on the try that held the instance when it was read, so a worker that
ended its try meanwhile keeps its outcome and the mark of that instance is simply lost; and a try the mark ended
loses every later write of its worker (its outcome is refused, as for a zombie). The caller releases the limit
slots of every instance it moved out of queued/running.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from updraft.model.records import DagRun, TaskInstance
from updraft.model.states import (
    FINISHED_TI_STATES,
    RUNNING_FOR_MARK,
    TICKET_HOLDING_STATES,
    DagRunState,
    TaskInstanceState,
)
from updraft.scheduling.decisions.changes import TIChange
from updraft.scheduling.decisions.clearing import Selection, relatives
from updraft.serialization.model import SerializedDAG

TI = TaskInstanceState


def _change(ti: TaskInstance, state: TaskInstanceState, now: dt.datetime, note: str | None) -> TIChange:
    fields: dict[str, Any] = {"end_date": now, "start_date": ti.start_date or now, "next_retry_at": None}
    if ti.next_method is not None or ti.trigger is not None:  # a mark ends a deferral (or its resumption)
        fields.update(trigger=None, next_method=None, next_kwargs=None)
    if ti.state in TICKET_HOLDING_STATES:
        fields.update(lease_expires_at=None)
    if note is not None:
        fields["note"] = note
    return TIChange(ti.key, ti.state, state, fields, expected_try_id=ti.try_id)


def run_mark(dag: SerializedDAG, tis: Iterable[TaskInstance], state: DagRunState, *,
             now: dt.datetime) -> list[TIChange]:
    """A run marked success or failed (``set_dag_run_state_to_success/failed``): running tries take the run's
    state, every other unfinished instance (never touched ones too) is skipped, finished ones keep theirs."""
    ti_state = TI.SUCCESS if state == DagRunState.SUCCESS else TI.FAILED
    changes = []
    for ti in tis:
        if ti.state in RUNNING_FOR_MARK:
            changes.append(_change(ti, ti_state, now, None))
        elif ti.state not in FINISHED_TI_STATES:
            changes.append(_change(ti, TI.SKIPPED, now, None))
    return changes


def marked_selection(dag: SerializedDAG, task_id: str, map_index: int | None, *, upstream: bool,
                     downstream: bool) -> Selection:
    """The instances a task mark names: the task (one map index, or all), and its relatives when asked (Updraft
    has no teardown tasks, which Airflow leaves out of a downstream mark)."""
    task_ids = {task_id} if map_index is None else set()
    if upstream:
        task_ids |= relatives(dag, [task_id], upstream=True)
    if downstream:
        task_ids |= relatives(dag, [task_id], upstream=False)
    instances = frozenset() if map_index is None else frozenset({(task_id, map_index)})
    return Selection(frozenset(task_ids), instances)


def task_marks(tis: Iterable[TaskInstance], selection: Selection, state: TaskInstanceState, *, now: dt.datetime,
               note: str | None = None) -> list[TIChange]:
    """Instances set to ``state`` (``mark_tasks.set_state``): the selected ones not in it already."""
    return [_change(ti, state, now, note) for ti in sorted(tis, key=lambda t: (t.task_id, t.map_index))
            if selection.matches(ti) and ti.state != state]


def runs_in_range(runs: Iterable[DagRun], current: DagRun, *, past: bool, future: bool) -> list[DagRun]:
    """The runs a mark with ``include_past``/``include_future`` reaches (``get_run_ids``): by logical date from
    the first run's (past) to the last one's (future); a run without a logical date reaches only itself."""
    at = current.logical_date
    if at is None or not (past or future):
        return [current]
    chosen = []
    for run in runs:
        date = run.logical_date
        if run.run_id == current.run_id or (date is not None and (
                date == at or (past and date < at) or (future and date > at))):
            chosen.append(run)
    return chosen
