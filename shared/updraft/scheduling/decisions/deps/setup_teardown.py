"""The setup/teardown half of Airflow's ``TriggerRuleDep``, on counts (pure, so every case is a table row).

Beyond its direct upstream a task's readiness depends on:

* a work task (neither setup nor teardown) on its *indirect* relevant setups (``setup >> a >> b``: ``b`` also waits
  for ``setup``). Any of them failed: the task is ``upstream_failed``; skipped: ``skipped``; until all succeeded it
  waits ("All setup tasks must complete successfully") - ``_evaluate_setup_constraint``;
* a teardown whose direct rule passed, on every task between its setups and itself: it tears down only once the
  whole scope is done - ``_evaluate_teardown_scope``.

``combine`` merges these with the direct trigger-rule result the way Airflow's generator does: a state the setup
constraint decides wins and stops there; otherwise the first failing status is the reason and the direct rule
may still decide a state.
"""

from __future__ import annotations

from dataclasses import dataclass

from updraft.model.states import TaskInstanceState
from updraft.scheduling.decisions.deps.base import DepStatus, failing
from updraft.scheduling.decisions.deps.trigger_rule import NAME, TriggerRuleResult, UpstreamCounts

TI = TaskInstanceState


@dataclass(frozen=True)
class ScopeCounts:
    """A teardown's scope: how many instances of the tasks between its setups and itself exist, and how many are
    finished."""

    expected: int
    done: int


def evaluate_setup_constraint(setups: UpstreamCounts, *, relevant: list[str], map_index: int = -1
                              ) -> TriggerRuleResult | None:
    """``setups`` counts the instances of a work task's indirect relevant setups; None: the constraint holds."""
    new_state: TaskInstanceState | None = None
    if setups.upstream_failed or setups.failed:
        new_state = TI.UPSTREAM_FAILED
    elif setups.skipped:
        new_state = TI.SKIPPED
    elif setups.removed and setups.success and map_index > -1 and map_index >= setups.success:
        new_state = TI.REMOVED
    non_successes = setups.upstream - setups.success - (setups.removed if map_index > -1 else 0)
    if non_successes <= 0 and new_state is None:
        return None
    return TriggerRuleResult(_waiting(setups, relevant), new_state)


def _waiting(setups: UpstreamCounts, relevant: list[str]) -> DepStatus:
    return failing(NAME, f"All setup tasks must complete successfully. Relevant setups: {relevant}: "
                         f"{setups.describe()}")


def evaluate_teardown_scope(rule: str, scope: ScopeCounts, scope_ids: list[str]) -> TriggerRuleResult | None:
    """A teardown whose direct rule passed still waits for every in-scope task; None: the scope is done."""
    if scope.done >= scope.expected:
        return None
    return TriggerRuleResult(failing(
        NAME, f"Task's trigger rule '{rule}' requires all tasks between setup and teardown to have completed, "
              f"but found {scope.expected - scope.done} in-scope task(s) not done. in_scope_task_ids={scope_ids}"))


def combine(direct: TriggerRuleResult, setup: TriggerRuleResult | None) -> TriggerRuleResult:
    """A work task's rule: the setup constraint first (a state it decides ends the evaluation), then the direct
    rule."""
    if setup is None:
        return direct
    if setup.new_state is not None:
        return setup
    return TriggerRuleResult(setup.status, direct.new_state)
