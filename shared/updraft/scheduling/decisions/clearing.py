"""Which task instances a clear resets and what each reset writes (Airflow's ``DAG.clear`` and
``clear_task_instances``), decided from what is stored, without AWS.

A cleared instance loses its state, so the scheduler evaluates it again and a new try runs it: its try number goes
up at that claim (the item keeps the number it had), and its ``max_tries`` becomes ``try_number + retries``, as
Airflow extends it, so the rerun has its full retries again. A finished run goes back to ``queued``
(``reset_dag_runs``), so the scheduler starts it again; a queued or running one keeps its state.

Where Updraft differs from Airflow: a *running* try is not killed (Airflow moves it to ``restarting`` and its
supervisor stops the process). Its reset removes its try id instead, so everything its worker writes later
(heartbeat, outcome) is refused by the try-id fence, its limit slots are released at once and the instance reruns
without waiting for that worker to stop.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from updraft.model.records import TaskInstance, TIKey
from updraft.model.states import (
    FAILED_TI_STATES,
    FINISHED_RUN_STATES,
    FINISHED_TI_STATES,
    DagRunState,
    TaskInstanceState,
)
from updraft.scheduling.decisions.task_graph import clear_subset, relatives
from updraft.serialization.model import SerializedDAG, SerializedTask

# ``relatives`` lives with the other graph walks; marking and the API read it from here.
__all__ = ["Reset", "Selection", "as_recorded", "relatives", "reset_of", "resets", "run_state_after_clear", "to_clear",
           "with_relatives"]

TI = TaskInstanceState


@dataclass(frozen=True)
class Reset:
    """One cleared instance: the write that resets ``ti`` (as read) to no state, fenced on its try."""

    ti: TaskInstance
    fields: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> TIKey:
        return self.ti.key


@dataclass(frozen=True)
class Selection:
    """What a clear names: whole tasks (every map index) and single (task, map index) pairs."""

    task_ids: frozenset[str] | None = None  # None: every task of the DAG
    instances: frozenset[tuple[str, int]] = frozenset()

    def matches(self, ti: TaskInstance) -> bool:
        if self.task_ids is None:
            return True
        return ti.task_id in self.task_ids or (ti.task_id, ti.map_index) in self.instances


def with_relatives(dag: SerializedDAG, selection: Selection, *, upstream: bool, downstream: bool) -> Selection:
    """The selection plus the tasks up/downstream of what it names, with the setups and teardowns enclosing them
    (Airflow's REST clear: ``partial_subset`` when either direction is asked for). Whole tasks: Airflow clears
    every map index of a relative."""
    if selection.task_ids is None or not (upstream or downstream):
        return selection
    named = set(selection.task_ids) | {task_id for task_id, _ in selection.instances}
    extra = clear_subset(dag, named, upstream=upstream, downstream=downstream)
    return Selection(frozenset(selection.task_ids | extra), selection.instances)


def to_clear(tis: Iterable[TaskInstance], selection: Selection, *, only_failed: bool = False,
             only_running: bool = False) -> list[TaskInstance]:
    """The instances a clear takes, as Airflow's ``DAG.clear`` filters them, in task then map-index order."""
    chosen = [ti for ti in tis if selection.matches(ti)
              and (not only_failed or ti.state in FAILED_TI_STATES)
              and (not only_running or ti.state == TI.RUNNING)]
    return sorted(chosen, key=lambda ti: (ti.task_id, ti.map_index))


def reset_of(ti: TaskInstance, task: SerializedTask | None, *, note: str | None = None) -> Reset:
    """The write that clears ``ti``: no state, no try id (see :meth:`Store.reset_ti`), nothing held, no deferral
    to resume (Airflow clears next_method/next_kwargs), retries extended as ``clear_task_instances`` does (for
    a task gone from the DAG: ``max(max_tries, try_number)``)."""
    retries = task.retries or 0 if task is not None else None
    max_tries = ti.try_number + retries if retries is not None else max(ti.max_tries or 0, ti.try_number)
    fields: dict[str, Any] = {"max_tries": max_tries, "queued_at": None, "next_retry_at": None,
                              "lease_expires_at": None, "xcom_length": None,
                              "blocked_reason": None, "trigger": None, "next_method": None, "next_kwargs": None}
    if task is not None and task.weights_by_try:
        # Airflow re-evaluates the priority weight strategy on clear, at the instance's current try number.
        fields["priority_weight"] = task.weight_at_try(ti.try_number)
    if note is not None:
        fields["note"] = note
    return Reset(ti, fields)


def resets(dag: SerializedDAG, tis: Iterable[TaskInstance], *, note: str | None = None) -> list[Reset]:
    """The resets of the instances to clear; an instance never touched (no item) has nothing to reset."""
    return [reset_of(ti, dag.task_dict.get(ti.task_id), note=note) for ti in tis
            if ti.state is not None or ti.try_number > 0]


def as_recorded(ti: TaskInstance) -> TaskInstance:
    """A try as its record keeps it once superseded (``TaskInstanceHistory.record_ti``): a finished state stays,
    any other (running, queued, up_for_retry, scheduled again) is recorded as failed."""
    return dataclasses.replace(ti, state=ti.state if ti.state in FINISHED_TI_STATES else TI.FAILED)


def run_state_after_clear(state: DagRunState, *, reset_dag_runs: bool = True) -> DagRunState | None:
    """A finished run goes back to queued so the scheduler starts it again; None: its state stays."""
    if reset_dag_runs and state in FINISHED_RUN_STATES:
        return DagRunState.QUEUED
    return None
