"""The previous run's task instances, for ``depends_on_past``: the read the scheduler and ``why`` both make."""

from __future__ import annotations

from updraft.model.records import DagRun, TaskInstance
from updraft.serialization.model import SerializedDAG
from updraft.store.api import Store


def previous_run_tis(store: Store, dag: SerializedDAG, run: DagRun) -> tuple[list[TaskInstance] | None, bool]:
    """The previous run's instances and whether there is one; nothing is read unless a task depends on the past.

    As Airflow's PrevDagrunDep: with catchup, the previous scheduled run; without, the previous run of any type.
    """
    if run.logical_date is None or not any(t.depends_on_past for t in dag.tasks):
        return None, False
    previous = store.previous_run(run.dag_id, run.logical_date, scheduled_only=bool(dag.catchup))
    if previous is None:
        return None, False
    return store.get_run_tis(previous.dag_id, previous.run_id), True
