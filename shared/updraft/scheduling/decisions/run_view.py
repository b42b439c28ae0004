"""One run's task instances as the decisions see them: every task's instances, including those with no item yet.

The store keeps no item for a task nobody has touched ("no status" in Airflow), and a mapped task has no
instances until it expands; the view fills both in as *virtual* instances in state None so that the rules can
count them the way Airflow counts its rows: an unmapped task is one instance, a mapped task not yet expanded is
its one ``map_index=-1`` instance, an expanded one is its ``0..n-1`` instances. Decisions made during one
evaluation update the view's states, which is how a failure propagates through a whole branch in one pass.
"""

from __future__ import annotations

import bisect
import dataclasses
import datetime as dt
from collections.abc import Iterable, Sequence
from typing import Any

from updraft.model.records import UNMAPPED, DagRun, TaskInstance, TIKey
from updraft.model.states import UNFINISHED_TI_STATES, DagRunType, TaskInstanceState
from updraft.scheduling.decisions.deps.trigger_rule import UpstreamCounts
from updraft.serialization.model import SerializedDAG, SerializedTask

TI = TaskInstanceState


_TI_FIELDS = frozenset(f.name for f in dataclasses.fields(TaskInstance)) - {"dag_id", "run_id", "task_id", "map_index"}


def _aware(value: dt.datetime) -> dt.datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)


def task_in_run(task: SerializedTask, run: DagRun) -> bool:
    """Airflow's ``verify_integrity`` filter: a task outside its own start/end dates has no instance in the run."""
    if run.run_type == DagRunType.BACKFILL or run.logical_date is None:
        return True
    logical = _aware(run.logical_date)
    if task.start_date is not None and _aware(task.start_date) > logical:
        return False
    return not (task.end_date is not None and logical > _aware(task.end_date))


class RunView:
    def __init__(self, dag: SerializedDAG, run: DagRun, tis: Sequence[TaskInstance]) -> None:
        self.dag = dag
        self.run = run
        self.tasks: dict[str, Any] = dag.task_dict
        self.order = dag.topological_order
        # Items for tasks this DAG version does not have are not ours to decide (runs are pinned to a version).
        self._tis = {ti.key: ti for ti in tis if ti.task_id in self.tasks}
        self._states: dict[TIKey, TaskInstanceState | None] = {k: ti.state for k, ti in self._tis.items()}
        # Tasks share their date bounds (the DAG's, mostly): each pair of bounds is compared once.
        bounds: dict[tuple[dt.datetime | None, dt.datetime | None], bool] = {}
        for task in self.tasks.values():
            key = (task.start_date, task.end_date)
            if key not in bounds:
                bounds[key] = task_in_run(task, run)
        self.in_run = {tid for tid, task in self.tasks.items() if bounds[(task.start_date, task.end_date)]}
        self._indexes: dict[str, list[int]] = {tid: self._initial_indexes(tid) for tid in self.in_run}

    def _initial_indexes(self, task_id: str) -> list[int]:
        if not self.tasks[task_id].is_mapped:
            return [UNMAPPED]
        expanded = sorted(k.map_index for k in self._tis if k.task_id == task_id and k.map_index >= 0)
        return expanded or [UNMAPPED]

    # -- instances ---------------------------------------------------------------------------------------------
    def key(self, task_id: str, map_index: int = UNMAPPED) -> TIKey:
        return TIKey(self.run.dag_id, self.run.run_id, task_id, map_index)

    def instances(self, task_id: str) -> list[TIKey]:
        """The task's instances in this run (none for a task outside its start/end dates)."""
        return [self.key(task_id, i) for i in self._indexes.get(task_id, ())]

    def all_instances(self) -> list[TIKey]:
        return [k for tid in self.order for k in self.instances(tid)]

    def is_expanded(self, task_id: str) -> bool:
        return any(i >= 0 for i in self._indexes.get(task_id, ()))

    def set_indexes(self, task_id: str, indexes: Iterable[int]) -> None:
        self._indexes[task_id] = sorted(set(indexes))

    def ti(self, key: TIKey) -> TaskInstance | None:
        """The item as stored plus this pass's decisions, or None for an untouched virtual instance."""
        return self._tis.get(key)

    def state(self, key: TIKey) -> TaskInstanceState | None:
        return self._states.get(key)

    def apply(self, key: TIKey, state: TaskInstanceState, fields: dict[str, Any]) -> None:
        """Record a decision as if it were already stored, so later decisions in the same pass see it."""
        self._states[key] = state
        base = self._tis.get(key) or TaskInstance(dag_id=key.dag_id, run_id=key.run_id, task_id=key.task_id,
                                                  map_index=key.map_index)
        known = {k: v for k, v in fields.items() if k in _TI_FIELDS}
        self._tis[key] = dataclasses.replace(base, state=state, **known)

    # -- what the rules read -----------------------------------------------------------------------------------
    def upstream_counts(self, task: SerializedTask, map_index: int = UNMAPPED) -> UpstreamCounts | None:
        """Finished upstream instances by state, and how many upstream instances there are (Airflow's rows).

        Instance ``map_index`` of a task in a mapped task group counts only instance ``map_index`` of each upstream
        task in the same group (Airflow's ``_iter_upstream_conditions``); every other upstream counts whole."""
        upstream_ids = list(task.upstream_task_ids)
        if not upstream_ids:
            return None
        return self.counts_of(upstream_ids, same_index=(task.map_group_id, map_index))

    def _instances_counted(self, task_id: str, same_index: tuple[str | None, int]) -> list[TIKey]:
        group_id, map_index = same_index
        if group_id is None or map_index < 0 or self.tasks[task_id].map_group_id != group_id:
            return self.instances(task_id)
        # One key, found by bisection: a group of n indexes is counted in n log n, not n squared.
        indexes = self._indexes.get(task_id, [])
        at = bisect.bisect_left(indexes, map_index)
        if at < len(indexes) and indexes[at] == map_index:
            return [self.key(task_id, map_index)]
        # Not expanded yet: its one unexpanded instance stands for index map_index (unfinished, or its fate).
        return [self.key(task_id, UNMAPPED)] if indexes[:1] == [UNMAPPED] else []

    def counts_of(self, task_ids: Sequence[str], *, same_index: tuple[str | None, int] = (None, UNMAPPED)
                  ) -> UpstreamCounts:
        """The instances of ``task_ids`` by finished state, those of setup tasks also on their own."""
        tally = {TI.SUCCESS: 0, TI.SKIPPED: 0, TI.FAILED: 0, TI.UPSTREAM_FAILED: 0, TI.REMOVED: 0}
        setup_tally = {TI.SUCCESS: 0, TI.SKIPPED: 0}
        rows = setup_rows = 0
        for upstream_id in task_ids:
            is_setup = upstream_id in self.tasks and self.tasks[upstream_id].is_setup
            for key in self._instances_counted(upstream_id, same_index):
                rows += 1
                setup_rows += is_setup
                state = self._states.get(key)
                if state in tally:
                    tally[state] += 1
                    if is_setup and state in setup_tally:
                        setup_tally[state] += 1
        # Airflow counts rows only when an upstream is mapped; otherwise each upstream task counts once.
        if any(self.tasks[u].is_mapped for u in task_ids if u in self.tasks):
            upstream, setups = rows, setup_rows
        else:
            upstream = len(task_ids)
            setups = sum(1 for u in task_ids if u in self.tasks and self.tasks[u].is_setup)
        return UpstreamCounts(upstream=upstream, success=tally[TI.SUCCESS], skipped=tally[TI.SKIPPED],
                              failed=tally[TI.FAILED], upstream_failed=tally[TI.UPSTREAM_FAILED],
                              removed=tally[TI.REMOVED], setup=setups, success_setup=setup_tally[TI.SUCCESS],
                              skipped_setup=setup_tally[TI.SKIPPED])

    def finished_count(self, task_ids: Iterable[str]) -> tuple[int, int]:
        """(instances, finished instances) of ``task_ids``: a teardown's scope."""
        keys = [k for tid in task_ids for k in self.instances(tid)]
        return len(keys), sum(1 for k in keys if self._states.get(k) not in UNFINISHED_TI_STATES)
