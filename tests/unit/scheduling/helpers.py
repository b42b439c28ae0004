"""Building blocks for the pure scheduling tests: real serialized DAGs, runs, and a dict standing in for the store."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

from updraft.model.records import UNMAPPED, DagRun, TaskInstance, TIKey
from updraft.model.states import DagRunState, TaskInstanceState
from updraft.scheduling.decisions.evaluation import RunEvaluation, evaluate_run
from updraft.serialization import deserialize_dag, serialize_dag
from updraft.serialization.model import SerializedDAG

S = TaskInstanceState
START = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
NOW = dt.datetime(2024, 3, 1, 12, 0, tzinfo=dt.UTC)


def serialized(dag: Any) -> SerializedDAG:
    """The DAG exactly as the scheduler reads it: through the JSON document and back."""
    return deserialize_dag(serialize_dag(dag, relative_fileloc=f"{dag.dag_id}.py", file_hash="h"))


def make_run(dag_id: str = "d", run_id: str = "manual__1", *, state: DagRunState = DagRunState.RUNNING,
             logical_date: dt.datetime | None = START, start_date: dt.datetime | None = NOW,
             run_type: str = "manual") -> DagRun:
    return DagRun(dag_id=dag_id, run_id=run_id, run_type=run_type, dag_hash="h", state=state,
                  logical_date=logical_date, start_date=start_date)


def make_ti(run: DagRun, task_id: str, state: TaskInstanceState | None, map_index: int = UNMAPPED,
            **fields: Any) -> TaskInstance:
    return TaskInstance(dag_id=run.dag_id, run_id=run.run_id, task_id=task_id, map_index=map_index, state=state,
                        **fields)


class FakeRunStore:
    """A run's items keyed like the store: ``apply`` performs each change as the conditional write it is."""

    def __init__(self, run: DagRun, tis: list[TaskInstance] | None = None) -> None:
        self.run = run
        self.items: dict[TIKey, TaskInstance] = {ti.key: ti for ti in tis or ()}

    def add(self, task_id: str, state: TaskInstanceState | None, map_index: int = UNMAPPED,
            **fields: Any) -> TaskInstance:
        ti = make_ti(self.run, task_id, state, map_index, **fields)
        self.items[ti.key] = ti
        return ti

    def tis(self) -> list[TaskInstance]:
        return list(self.items.values())

    def evaluate(self, dag: SerializedDAG, *, now: dt.datetime = NOW, **kwargs: Any) -> RunEvaluation:
        evaluation = evaluate_run(dag, self.run, self.tis(), now=now, **kwargs)
        self.apply(evaluation)
        return evaluation

    def apply(self, evaluation: RunEvaluation) -> None:
        for change in evaluation.changes:
            current = self.items.get(change.key)
            assert (current.state if current else None) == change.expected, change
            if change.expected_try_id is not None:
                assert current is not None and current.try_id == change.expected_try_id, change
            base = current or make_ti(self.run, change.key.task_id, None, change.key.map_index)
            self.items[change.key] = dataclasses.replace(base, state=change.state, **change.fields)
        if evaluation.run_state is not None:
            self.run.state = evaluation.run_state
            self.run.note = evaluation.run_note

    def set(self, task_id: str, state: TaskInstanceState, map_index: int = UNMAPPED, **fields: Any) -> None:
        key = TIKey(self.run.dag_id, self.run.run_id, task_id, map_index)
        base = self.items.get(key) or make_ti(self.run, task_id, None, map_index)
        self.items[key] = dataclasses.replace(base, state=state, **fields)

    def states(self) -> dict[str, str | None]:
        return {k.label: (ti.state.value if ti.state else None)
                for k, ti in sorted(self.items.items(), key=lambda kv: (kv[0].task_id, kv[0].map_index))}
