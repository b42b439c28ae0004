""""Why is my task not running?": the reasons one task instance is not queued, as Airflow's task-instance
details and ``airflow tasks failed-deps`` give them.

A scheduled instance waits on a limit: the claim that last refused it stored why (``TaskInstance.blocked_reason``),
so answering costs one read. An instance that is not scheduled yet (no state, an unmet trigger rule, a retry
wait, the previous run) waits on its dependencies: they are evaluated here, live, from the serialized DAG and the
run's instances (pure code, no user code). An instance in any other state is not waiting: its state says why.
"""

from __future__ import annotations

import datetime as dt

from updraft.model.records import UNMAPPED, TIKey
from updraft.model.states import SCHEDULABLE_TI_STATES, TaskInstanceState
from updraft.scheduling.decisions.blocked import BlockedReason, BlockKind
from updraft.scheduling.decisions.evaluation import evaluate_run
from updraft.scheduling.poison import poisoned_reason
from updraft.scheduling.previous_run import previous_run_tis
from updraft.store.api import Store


class NotFound(LookupError):
    """No such DAG run or task: the message says which, in Airflow's words."""


def why_not_running(store: Store, dag_id: str, run_id: str, task_id: str, map_index: int = UNMAPPED, *,
                    now: dt.datetime | None = None) -> list[BlockedReason]:
    """What keeps the instance from being queued; empty when nothing does (the next pass queues it)."""
    run = store.get_run(dag_id, run_id)
    if run is None:
        raise NotFound(f"DagRun for {dag_id} with run_id {run_id} not found")
    if (poisoned := poisoned_reason(run)) is not None:
        return [*_paused(store, dag_id), poisoned]  # the scheduler set the run aside: nothing else is decided
    dag = store.get_serialized_dag(dag_id, run.dag_hash)
    if dag is None or task_id not in dag.task_dict:
        raise NotFound(f"Task {task_id} not found in DAG {dag_id}")
    key = TIKey(dag_id, run_id, task_id, map_index)
    tis = store.get_run_tis(dag_id, run_id)
    ti = next((t for t in tis if t.key == key), None)
    if ti is None:
        _require_index(key, sorted(t.map_index for t in tis if t.task_id == task_id and t.map_index != UNMAPPED))
    state = ti.state if ti is not None else None
    reasons = _paused(store, dag_id)
    if state is not None and state not in SCHEDULABLE_TI_STATES:
        return [*reasons, BlockedReason(BlockKind.DEP, f"Task is in the '{state.value}' state.",
                                        "Task Instance State")]
    if ti is not None and state == TaskInstanceState.SCHEDULED:
        return [*reasons, *([BlockedReason.from_stored(ti.blocked_reason)] if ti.blocked_reason else [])]
    previous_tis, has_previous = previous_run_tis(store, dag, run)
    evaluation = evaluate_run(dag, run, tis, now=now or dt.datetime.now(dt.UTC), previous_tis=previous_tis,
                              has_previous_run=has_previous)
    return [*reasons, *(BlockedReason.from_dep(status) for status in evaluation.blocked.get(key, []))]


def _require_index(key: TIKey, indexes: list[int]) -> None:
    """A mapped task is asked about one expanded instance; before it expands, only about the task itself."""
    if indexes and key.map_index not in indexes:
        raise NotFound(f"{key.task_id} is mapped: choose --map-index from {indexes[0]}..{indexes[-1]}")
    if not indexes and key.map_index != UNMAPPED:
        raise NotFound(f"{key.task_id} has no instance with map index {key.map_index} in run {key.run_id}")


def _paused(store: Store, dag_id: str) -> list[BlockedReason]:
    """Airflow's DagUnpausedDep: a paused DAG's runs are not examined, so nothing of it is queued."""
    meta = store.get_dag_meta(dag_id)
    if meta is not None and meta.is_paused:
        return [BlockedReason(BlockKind.DEP, f"Task's DAG '{dag_id}' is paused.", "Dag Not Paused")]
    return []
