"""The standard provider's cross-DAG triggers (``airflow.providers.standard.triggers.external_task``):
``DagStateTrigger`` (a deferrable ``TriggerDagRunOperator`` waiting for its run) and ``WorkflowTrigger`` (a
deferrable ``ExternalTaskSensor``).

Both are polling triggers. Airflow's ``run()`` loops in a triggerer process; here one check is ``poll_once(runs)``,
which a short check function calls at the trigger's interval (a Step Functions Wait/Choice loop) through
``updraft.runtime.cross_dag.poll_trigger(trigger, store)``, so waiting holds no worker and costs a few reads per
poll. ``runs`` is that function's :class:`~updraft.runtime.cross_dag.CrossDag`: the triggers are imported by the
operators, which must not reach the task runtime, so they name only the reads they need (:class:`RunReader`).
``serialize()`` gives Airflow's classpath and keyword arguments, from which the check function rebuilds the
trigger; the event it returns is the one Airflow's trigger yields.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection
from typing import Any, Protocol

MODULE = "airflow.providers.standard.triggers.external_task"


class RunReader(Protocol):
    """The reads of other DAGs' runs a poll makes (``updraft.runtime.cross_dag.CrossDag`` has them)."""

    def run_state(self, dag_id: str, run_id: str) -> str | None: ...

    def count_runs(self, dag_id: str, states: Collection[str] | None, *, run_ids: Collection[str] | None = None,
                   logical_dates: Collection[dt.datetime] | None = None) -> int: ...

    def count_matching(self, dag_id: str, states: Collection[str | None] | None, *,
                       task_ids: Collection[str] | None = None, task_group_id: str | None = None,
                       run_ids: Collection[str] | None = None,
                       logical_dates: Collection[dt.datetime] | None = None) -> float: ...


class TriggerEvent:
    """What a trigger fires with: one JSON-able payload (Airflow's ``TriggerEvent``)."""

    def __init__(self, payload: Any) -> None:
        self.payload = payload

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TriggerEvent) and other.payload == self.payload

    def __hash__(self) -> int:
        return hash(repr(self.payload))

    def __repr__(self) -> str:
        return f"TriggerEvent<{self.payload!r}>"


def _values(states: Collection[Any] | None) -> list[Any] | None:
    """States as plain strings (enum members serialize as their values)."""
    return None if states is None else [getattr(s, "value", s) for s in states]


class DagStateTrigger:
    """Fires once every named run (by id, else by logical date) is in one of ``states``; the event carries each
    run id's state, for ``TriggerDagRunOperator.execute_complete``."""

    def __init__(self, dag_id: str, states: list[Any], run_ids: list[str] | None = None,
                 execution_dates: list[dt.datetime] | None = None, poll_interval: float = 5.0) -> None:
        self.dag_id = dag_id
        self.states = _values(states) or []
        self.run_ids = run_ids
        self.execution_dates = execution_dates
        self.poll_interval = poll_interval

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return f"{MODULE}.DagStateTrigger", {
            "dag_id": self.dag_id, "states": self.states, "poll_interval": self.poll_interval,
            "run_ids": self.run_ids, "execution_dates": self.execution_dates,
        }

    def poll_once(self, runs: RunReader) -> TriggerEvent | None:
        expected = len(self.run_ids or self.execution_dates or ())
        done = runs.count_runs(self.dag_id, self.states, run_ids=self.run_ids,
                                    logical_dates=self.execution_dates)
        if done != expected:
            return None
        classpath, data = self.serialize()
        for run_id in self.run_ids or ():
            data[run_id] = runs.run_state(self.dag_id, run_id)
        return TriggerEvent((classpath, data))


class WorkflowTrigger:
    """Fires ``{"status": "failed" | "skipped" | "success"}`` once the external DAG's runs, tasks or task group
    reach those states, with the precedence of Airflow's (failed, then skipped, then all allowed)."""

    def __init__(self, external_dag_id: str, run_ids: list[str] | None = None,
                 execution_dates: list[dt.datetime] | None = None, logical_dates: list[dt.datetime] | None = None,
                 external_task_ids: Collection[str] | None = None, external_task_group_id: str | None = None,
                 failed_states: Collection[str] | None = None, skipped_states: Collection[str] | None = None,
                 allowed_states: Collection[str] | None = None, poke_interval: float = 2.0,
                 soft_fail: bool = False, **kwargs: Any) -> None:
        if execution_dates:
            raise ValueError("WorkflowTrigger(execution_dates=...) is Airflow 2's; pass logical_dates")
        if kwargs:
            raise TypeError(f"WorkflowTrigger got unexpected arguments: {sorted(kwargs)}")
        self.external_dag_id = external_dag_id
        self.external_task_ids = list(external_task_ids) if external_task_ids else None
        self.external_task_group_id = external_task_group_id
        self.failed_states = _values(failed_states)
        self.skipped_states = _values(skipped_states)
        self.allowed_states = _values(allowed_states)
        self.run_ids = run_ids
        self.logical_dates = logical_dates
        self.poke_interval = poke_interval
        self.soft_fail = soft_fail

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return f"{MODULE}.WorkflowTrigger", {
            "external_dag_id": self.external_dag_id, "external_task_ids": self.external_task_ids,
            "external_task_group_id": self.external_task_group_id, "failed_states": self.failed_states,
            "skipped_states": self.skipped_states, "allowed_states": self.allowed_states,
            "poke_interval": self.poke_interval, "soft_fail": self.soft_fail, "run_ids": self.run_ids,
            "logical_dates": self.logical_dates,
        }

    def poll_once(self, runs: RunReader) -> TriggerEvent | None:
        def count(states: Collection[str] | None) -> float:
            return runs.count_matching(
                self.external_dag_id, states, task_ids=self.external_task_ids,
                task_group_id=self.external_task_group_id, run_ids=self.run_ids, logical_dates=self.logical_dates)

        if self.failed_states and count(self.failed_states) > 0:
            return TriggerEvent({"status": "failed"})
        if self.skipped_states and count(self.skipped_states) > 0:
            return TriggerEvent({"status": "skipped"})
        if count(self.allowed_states) == len(self.run_ids or self.logical_dates or ()):
            return TriggerEvent({"status": "success"})
        return None
