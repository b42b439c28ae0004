"""Setup and teardown constraints for one run's evaluation: which tasks each rule looks at, counted on the view.

The graph questions (which setups enclose a work task, which tasks are in a teardown's scope) depend only on the
DAG, so each is answered once per task and evaluation; the counts are read from the view each time, since
decisions made earlier in the same pass change them. Only built for a DAG that has setup tasks.
"""

from __future__ import annotations

from updraft.scheduling.decisions.deps.setup_teardown import (
    ScopeCounts,
    combine,
    evaluate_setup_constraint,
    evaluate_teardown_scope,
)
from updraft.scheduling.decisions.deps.trigger_rule import TriggerRuleResult
from updraft.scheduling.decisions.run_view import RunView
from updraft.scheduling.decisions.task_graph import relevant_setups, teardown_scope
from updraft.serialization.model import SerializedDAG, SerializedTask


class SetupTeardownRules:
    def __init__(self, dag: SerializedDAG, view: RunView) -> None:
        self.dag = dag
        self.view = view
        self._setups: dict[str, tuple[list[str], list[str]]] = {}
        self._scopes: dict[str, list[str]] = {}

    def rule(self, task: SerializedTask, map_index: int, direct: TriggerRuleResult) -> TriggerRuleResult:
        """The task's trigger-rule result once its setup (work task) or scope (teardown) constraint is added."""
        if task.is_teardown:
            if not direct.status.passed:
                return direct
            scope = self._scope(task.task_id)
            if not scope:
                return direct
            expected, done = self.view.finished_count(scope)
            waiting = evaluate_teardown_scope(task.trigger_rule, ScopeCounts(expected, done), scope)
            return direct if waiting is None else waiting
        relevant, indirect = self._relevant_setups(task)
        if not indirect:
            return direct
        setup = evaluate_setup_constraint(self.view.counts_of(indirect), relevant=relevant, map_index=map_index)
        return combine(direct, setup)

    def _relevant_setups(self, task: SerializedTask) -> tuple[list[str], list[str]]:
        """(every relevant setup, those not directly upstream): only the indirect ones add a constraint."""
        found = self._setups.get(task.task_id)
        if found is None:
            relevant = relevant_setups(self.dag, task.task_id)
            found = relevant, [s for s in relevant if s not in task.upstream_task_ids]
            self._setups[task.task_id] = found
        return found

    def _scope(self, teardown_id: str) -> list[str]:
        found = self._scopes.get(teardown_id)
        if found is None:
            found = self._scopes[teardown_id] = sorted(teardown_scope(self.dag, teardown_id))
        return found
