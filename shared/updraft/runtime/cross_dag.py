"""Other DAGs' runs as a task sees them: what ``TriggerDagRunOperator``, ``ExternalTaskSensor`` and their triggers
read and do. It is the runtime's side of the calls an Airflow 3 task makes to the execution API (``TriggerDagRun``,
``GetDagRunState``, ``GetDag``, ``get_dr_count``, ``get_ti_count``, ``get_task_states``).

Operator code never touches the store: it calls the ``CrossDag`` handed to its try (``context["ti"].cross_dag``),
and a trigger's poll builds one on the store its check function has, so the credentials these calls need stay in
this module. A run is created by the REST API's own ``trigger_dag`` (params validated, ids checked, pinned to the
DAG's current version) and reset by the REST API's own clear, so a run a task triggers is scheduled exactly as one
triggered by hand.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Collection, Iterable
from typing import Any

from updraft.model.records import DagRun
from updraft.model.states import DagRunType
from updraft.scheduling.decisions import Selection, resets, to_clear
from updraft.sdk.exceptions import AirflowBadRequest, DagNotFound
from updraft.store.api import Store

log = logging.getLogger(__name__)


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class CrossDag:
    """Reads and triggers other DAGs' runs for one try (or one trigger poll)."""

    def __init__(self, store: Store, *, now_fn: Callable[[], dt.datetime] = _utcnow,
                 nudge: Callable[[str, str], Any] | None = None) -> None:
        self.store = store
        self.now_fn = now_fn
        # Asks the scheduler to look at a new run now rather than at its next tick (the worker's hand-off).
        self.nudge = nudge

    # -- the DAG ---------------------------------------------------------------------------------------------
    def is_paused(self, dag_id: str) -> bool:
        """Whether ``dag_id`` is paused; ``DagNotFound`` when there is no such (active) DAG."""
        meta = self.store.get_dag_meta(dag_id)
        if meta is None or not meta.is_active:
            raise DagNotFound(f"Dag with dag_id: '{dag_id}' not found")
        return bool(meta.is_paused)

    def dag_presence(self, dag_id: str) -> str:
        """``"active"``, ``"deleted"`` (its file is gone) or ``"missing"`` (never seen)."""
        meta = self.store.get_dag_meta(dag_id)
        if meta is None:
            return "missing"
        return "active" if meta.is_active else "deleted"

    def missing_tasks(self, dag_id: str, task_ids: Iterable[str]) -> list[str]:
        """Which of ``task_ids`` the DAG's current version does not have (all of them when there is no DAG)."""
        dag = self._latest(dag_id)
        return [t for t in task_ids if dag is None or t not in dag.task_dict]

    def has_task_group(self, dag_id: str, group_id: str) -> bool:
        # lazy: cold start (scheduling.decisions.skips only for a task-group lookup)
        from updraft.scheduling.decisions import task_groups

        dag = self._latest(dag_id)
        return dag is not None and group_id in task_groups(dag)

    def _latest(self, dag_id: str) -> Any:
        meta = self.store.get_dag_meta(dag_id)
        if meta is None or not meta.is_active:
            return None
        return self.store.get_serialized_dag(dag_id, meta.dag_hash)

    # -- triggering ------------------------------------------------------------------------------------------
    def trigger(self, dag_id: str, *, run_id: str, conf: dict[str, Any] | None, logical_date: dt.datetime | None,
                reset_dag_run: bool, note: str | None = None) -> DagRun:
        """Create an ``operator_triggered`` run of ``dag_id``, as Airflow's execution API does for a
        TriggerDagRunOperator; when ``run_id`` exists already, clear that run (``reset_dag_run``) or raise
        ``DagRunAlreadyExists``. A DAG whose file has import errors cannot be triggered (``AirflowBadRequest``).
        ``note`` becomes the new run's note."""
        # lazy: cold start (the trigger path only when a task triggers a DAG)
        from updraft.scheduling.commands import DagRunAlreadyExists, trigger_dag

        meta = self.store.get_dag_meta(dag_id)
        if meta is not None and meta.relative_fileloc in {e["filename"] for e in self.store.list_import_errors()}:
            raise AirflowBadRequest(f"Dag with dag_id '{dag_id}' has import errors and cannot be triggered")
        try:
            run = trigger_dag(self.store, dag_id, now=self.now_fn(), conf=conf, logical_date=logical_date,
                              run_id=run_id, run_type=DagRunType.OPERATOR_TRIGGERED)
        except DagRunAlreadyExists:
            existing = self.store.get_run(dag_id, run_id)
            if not reset_dag_run or existing is None:
                raise
            self.clear_run(existing)
            run = existing
        else:
            if note is not None:
                self.store.set_run_note(dag_id, run.run_id, note)
        if self.nudge is not None:
            try:
                self.nudge(dag_id, run.run_id)
            except Exception:  # only a speed-up: the run exists and the next tick starts it
                log.warning("could not nudge the scheduler for %s/%s", dag_id, run.run_id, exc_info=True)
        return run

    def clear_run(self, run: DagRun) -> None:
        """Clear every task instance of ``run`` and requeue it if it had finished (the REST API's run clear,
        ``only_failed`` false: Airflow's ``dag.clear(run_id=...)``)."""
        # lazy: cold start (the task child loads dag_versions and manual_changes only when a task clears a run)
        from updraft.scheduling import pinned_dag
        from updraft.scheduling.commands import apply_resets

        dag = pinned_dag(self.store, run.dag_id, run.dag_hash)
        chosen = to_clear(self.store.get_run_tis(run.dag_id, run.run_id), Selection())
        apply_resets(self.store, run, resets(dag, chosen), now=self.now_fn())

    # -- reading runs and task instances ---------------------------------------------------------------------
    def run_state(self, dag_id: str, run_id: str) -> str | None:
        """The run's state (Airflow's ``GetDagRunState``); None when the run does not exist (any more)."""
        run = self.store.get_run(dag_id, run_id)
        return None if run is None else run.state.value

    def runs(self, dag_id: str, *, run_ids: Collection[str] | None = None,
             logical_dates: Collection[dt.datetime] | None = None) -> list[DagRun]:
        """The DAG's runs named by id, else those at the given logical dates (Airflow's filters: ids win)."""
        if run_ids:
            found = (self.store.get_run(dag_id, run_id) for run_id in dict.fromkeys(run_ids))
            return [run for run in found if run is not None]
        runs: dict[str, DagRun] = {}
        for when in set(logical_dates or ()):
            for run in self.store.runs_dated_between(dag_id, when, when):
                if run.logical_date == when:
                    runs[run.run_id] = run
        return list(runs.values())

    def count_runs(self, dag_id: str, states: Collection[str] | None, *, run_ids: Collection[str] | None = None,
                   logical_dates: Collection[dt.datetime] | None = None) -> int:
        """How many of the named runs are in ``states`` (all of them when no states: Airflow's ``get_dr_count``)."""
        return sum(1 for run in self.runs(dag_id, run_ids=run_ids, logical_dates=logical_dates)
                   if not states or run.state.value in states)

    def count_tis(self, dag_id: str, task_ids: Collection[str], states: Collection[str | None] | None, *,
                  run_ids: Collection[str] | None = None,
                  logical_dates: Collection[dt.datetime] | None = None) -> int:
        """How many task instances of ``task_ids`` (every map index) in the named runs are in ``states``
        (Airflow's ``get_ti_count``). A task no try has touched yet counts once, with state None."""
        count = 0
        for run in self.runs(dag_id, run_ids=run_ids, logical_dates=logical_dates):
            for state in self._states(run, task_ids).values():
                count += not states or state in states
        return count

    def task_group_states(self, dag_id: str, group_id: str, *, run_ids: Collection[str] | None = None,
                          logical_dates: Collection[dt.datetime] | None = None) -> dict[str, dict[str, str | None]]:
        """Run id -> the state of every task instance of the group in that run (Airflow's ``get_task_states``);
        the group's tasks come from the version the run is pinned to."""
        # lazy: cold start (scheduling.decisions.skips only for a task-group lookup)
        from updraft.scheduling.decisions import group_task_ids

        found: dict[str, dict[str, str | None]] = {}
        for run in self.runs(dag_id, run_ids=run_ids, logical_dates=logical_dates):
            dag = self.store.get_serialized_dag(run.dag_id, run.dag_hash)
            members = group_task_ids(dag, group_id) if dag is not None else None
            found[run.run_id] = self._states(run, sorted(members or ()))
        return found

    def count_matching(self, dag_id: str, states: Collection[str | None] | None, *,
                       task_ids: Collection[str] | None = None, task_group_id: str | None = None,
                       run_ids: Collection[str] | None = None,
                       logical_dates: Collection[dt.datetime] | None = None) -> float:
        """How many of the named runs match, as ``ExternalTaskSensor`` counts: with ``task_ids``, instances in
        ``states`` divided by the number of tasks; with a task group, the runs whose every group instance is in
        ``states``; else the runs in ``states``. Equal to the number of runs asked for: all of them match."""
        if task_ids:
            return self.count_tis(dag_id, task_ids, states, run_ids=run_ids,
                                  logical_dates=logical_dates) / len(task_ids)
        if task_group_id:
            matched = 0
            groups = self.task_group_states(dag_id, task_group_id, run_ids=run_ids, logical_dates=logical_dates)
            for task_states in groups.values():
                matched += bool(task_states) and all(state in (states or ()) for state in task_states.values())
            return matched
        return self.count_runs(dag_id, [s for s in states or () if s is not None], run_ids=run_ids,
                               logical_dates=logical_dates)

    def _states(self, run: DagRun, task_ids: Collection[str]) -> dict[str, str | None]:
        """Instance label -> state for ``task_ids`` in ``run``; an untouched task appears once, as None."""
        wanted = set(task_ids)
        states: dict[str, str | None] = {}
        for ti in self.store.get_run_tis(run.dag_id, run.run_id):
            if ti.task_id in wanted:
                states[ti.key.label] = ti.state.value if ti.state is not None else None
        seen = {label.split("[", 1)[0] for label in states}
        states.update({task_id: None for task_id in wanted - seen})
        return states


def poll_trigger(trigger: Any, store: Store) -> Any:
    """One check of a cross-DAG trigger (``DagStateTrigger``, ``WorkflowTrigger``): its event, or None to wait
    on. What the deferral machinery's check function calls at the trigger's interval."""
    return trigger.poll_once(CrossDag(store))
