"""A run's final state from its task instances, as Airflow's ``DagRun.update_state`` decides it.

- nothing unfinished and a leaf instance failed or upstream_failed: ``failed`` ("task_failure");
- nothing unfinished and every leaf instance succeeded or was skipped: ``success``;
- something unfinished, but no unfinished instance can ever run: ``failed`` ("all_tasks_deadlocked"). Airflow
  only declares a deadlock when no unfinished task has ``depends_on_past`` or a per-task concurrency limit and
  none is deferred (those may be waiting on something outside this run), and a task waiting for its retry time
  is not stuck;
- otherwise the run goes on (None).
Leaves are the tasks with no downstream task, where teardowns do not count (Airflow's ``_tis_for_dagrun_state``):
a teardown is not a leaf, and a task followed only by teardowns is, unless a teardown has
``on_failure_fail_dagrun``. So a failing clean-up does not fail the run, and a failed work task still does
although its teardown ran. Removed instances do not count.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from updraft.model.records import TIKey
from updraft.model.states import (
    FAILED_TI_STATES,
    SUCCESS_TI_STATES,
    UNFINISHED_TI_STATES,
    DagRunState,
    TaskInstanceState,
)
from updraft.scheduling.decisions.deps.prev_dagrun import depends_on_past
from updraft.scheduling.decisions.run_view import RunView
from updraft.serialization.model import SerializedTask


def run_outcome(view: RunView, can_run: Callable[[TIKey], bool]) -> tuple[DagRunState | None, str | None]:
    """``can_run(key)``: whether an unfinished instance's dependencies are met, ignoring retry waits."""
    instances = view.all_instances()
    unfinished = [k for k in instances if view.state(k) in UNFINISHED_TI_STATES]
    leaf_ids = leaf_task_ids(view.tasks)
    leaves = [k for k in instances if k.task_id in leaf_ids and view.state(k) != TaskInstanceState.REMOVED]
    if not unfinished:
        if any(view.state(k) in FAILED_TI_STATES for k in leaves):
            failed = [k.label for k in instances if view.state(k) == TaskInstanceState.FAILED]
            failed = failed or [k.label for k in leaves if view.state(k) in FAILED_TI_STATES]
            return DagRunState.FAILED, f"task_failure: {', '.join(failed[:10])} failed"
        if all(view.state(k) in SUCCESS_TI_STATES for k in leaves):
            return DagRunState.SUCCESS, None
    if _should_check_deadlock(view, unfinished) and not any(can_run(k) for k in unfinished):
        waiting = ", ".join(k.label for k in unfinished[:10])
        return DagRunState.FAILED, f"all_tasks_deadlocked: no unfinished task instance can run ({waiting})"
    return None, None


def leaf_task_ids(tasks: Mapping[str, SerializedTask]) -> set[str]:
    """The tasks whose instances decide the run's state; only when every task is an ignorable teardown, the
    tasks without downstream."""

    def decides(task: SerializedTask) -> bool:
        return not task.is_teardown or task.on_failure_fail_dagrun

    def is_effective_leaf(task: SerializedTask) -> bool:
        downstream = [tasks[d] for d in task.downstream_task_ids if d in tasks]
        return decides(task) and not any(decides(d) for d in downstream)

    return ({tid for tid, task in tasks.items() if is_effective_leaf(task)}
            or {tid for tid, task in tasks.items() if not task.downstream_task_ids})


def _should_check_deadlock(view: RunView, unfinished: list[TIKey]) -> bool:
    if not unfinished:
        return False
    for key in unfinished:
        task = view.tasks[key.task_id]
        if depends_on_past(task) or task.max_active_tis_per_dag is not None:
            return False
        if task.max_active_tis_per_dagrun is not None or view.state(key) == TaskInstanceState.DEFERRED:
            return False
    return True
