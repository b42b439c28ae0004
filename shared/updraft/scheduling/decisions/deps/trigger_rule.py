"""Airflow 3's trigger rules: given the states of a task's upstream instances, may it run, and if it never can,
is it ``skipped`` or ``upstream_failed``?

This is ``TriggerRuleDep._evaluate_direct_relatives`` rule for rule, on counts instead of SQL, so it can be tested
against a table of state combinations. ``upstream`` counts every map instance of a mapped upstream (a mapped
upstream that has not expanded yet counts as one unfinished instance), exactly as Airflow counts rows.
``all_done_setup_success`` (a teardown's rule) is ``all_done`` that also needs one direct setup to have succeeded;
without setups upstream it is ``all_done``, as in Airflow. The setup and teardown constraints beyond the direct
upstream (a work task waits for the setups enclosing it, a teardown for its whole scope) are in ``setup_teardown``.

Only finished upstream states are counted (``done``); an instance that is running, queued or absent is "not done".
When a rule both decides a final state and passes (``all_success`` on a mapped instance beyond the upstream's
successes, the rest removed), the state wins, as in Airflow where the instance is no longer schedulable
once it was marked. ``none_failed_min_one_success`` follows Airflow 3.3: every upstream done (skipped or removed)
with no success at all is ``upstream_failed`` (all skipped stays ``skipped``), and the rule passes only with a
success.
"""

from __future__ import annotations

from dataclasses import dataclass

from updraft.model.states import TaskInstanceState
from updraft.scheduling.decisions.deps.base import DepStatus, failing, passing
from updraft.sdk.trigger_rule import TriggerRule

NAME = "Trigger Rule"
TI = TaskInstanceState


@dataclass(frozen=True)
class UpstreamCounts:
    """Airflow's ``_UpstreamTIStates`` plus ``upstream``, the number of upstream instances (finished or not)."""

    upstream: int
    success: int = 0
    skipped: int = 0
    failed: int = 0
    upstream_failed: int = 0
    removed: int = 0
    # Of the above, the instances of setup tasks: how many there are, and how many succeeded or were skipped.
    setup: int = 0
    success_setup: int = 0
    skipped_setup: int = 0

    @property
    def done(self) -> int:
        return self.success + self.skipped + self.failed + self.upstream_failed + self.removed

    def describe(self) -> str:
        return (f"upstream_states=(success={self.success}, skipped={self.skipped}, failed={self.failed}, "
                f"upstream_failed={self.upstream_failed}, removed={self.removed}, done={self.done}), "
                f"upstream={self.upstream}")


@dataclass(frozen=True)
class TriggerRuleResult:
    status: DepStatus
    new_state: TaskInstanceState | None = None  # the state the instance must take now (it can never run)


def evaluate_trigger_rule(rule: str, counts: UpstreamCounts | None, *, map_index: int = -1) -> TriggerRuleResult:
    """Decide one instance's trigger rule; ``counts`` is None when the task has no upstream task at all."""
    if counts is None:
        return TriggerRuleResult(passing(NAME, "The task instance did not have any upstream tasks."))
    if rule == TriggerRule.ALWAYS:
        return TriggerRuleResult(passing(NAME, "The task had a always trigger rule set."))
    new_state = _final_state(rule, counts, map_index)
    failure = _failure_reason(rule, counts, map_index)
    if failure is None:
        status = passing(NAME, f"Task's trigger rule '{rule}' was met. {counts.describe()}")
    else:
        status = failing(NAME, f"Task's trigger rule '{rule}' {failure}. {counts.describe()}")
    return TriggerRuleResult(status, new_state)


def _final_state(rule: str, c: UpstreamCounts, map_index: int) -> TaskInstanceState | None:
    """The ``flag_upstream_failed`` half: when the rule can never be met, which state the instance takes."""
    upstream_done = c.done >= c.upstream
    if rule == TriggerRule.ALL_SUCCESS:
        if c.upstream_failed or c.failed:
            return TI.UPSTREAM_FAILED
        if c.skipped:
            return TI.SKIPPED
        if c.removed and c.success and map_index > -1 and map_index >= c.success:
            return TI.REMOVED
    elif rule == TriggerRule.ALL_FAILED:
        if c.success or c.skipped:
            return TI.SKIPPED
    elif rule == TriggerRule.ONE_SUCCESS:
        if upstream_done and c.done == c.skipped:
            return TI.SKIPPED
        if upstream_done and c.success <= 0:
            return TI.UPSTREAM_FAILED
    elif rule == TriggerRule.ONE_FAILED:
        if upstream_done and not (c.failed or c.upstream_failed):
            return TI.SKIPPED
    elif rule == TriggerRule.ONE_DONE:
        if upstream_done and not (c.failed or c.success):
            return TI.SKIPPED
    elif rule == TriggerRule.NONE_FAILED:
        if c.upstream_failed or c.failed:
            return TI.UPSTREAM_FAILED
    elif rule == TriggerRule.NONE_FAILED_MIN_ONE_SUCCESS:
        if c.upstream_failed or c.failed:
            return TI.UPSTREAM_FAILED
        if c.skipped == c.upstream:
            return TI.SKIPPED
        if upstream_done and c.success == 0:
            return TI.UPSTREAM_FAILED  # Airflow 3.3: all done (skipped or removed), none succeeded
    elif rule == TriggerRule.NONE_SKIPPED:
        if c.skipped:
            return TI.SKIPPED
    elif rule == TriggerRule.ALL_SKIPPED:
        if c.success or c.failed or c.upstream_failed:
            return TI.SKIPPED
    elif rule == TriggerRule.ALL_DONE_MIN_ONE_SUCCESS:
        # Skipped upstreams are not "done" for this rule: one skip and the task is skipped.
        if c.skipped > 0:
            return TI.SKIPPED
        non_skipped_done = c.success + c.failed + c.upstream_failed + c.removed
        if non_skipped_done >= c.upstream - c.skipped and c.success == 0:
            return TI.UPSTREAM_FAILED
    elif rule == TriggerRule.ALL_DONE_SETUP_SUCCESS:
        if upstream_done and c.setup and c.skipped_setup >= c.setup:
            return TI.SKIPPED  # every setup skipped: there is nothing to tear down
        if upstream_done and c.setup and c.success_setup == 0:
            return TI.UPSTREAM_FAILED  # no setup ran; if at least one did, the teardown runs
    return None  # all_done never decides a state


def _failure_reason(rule: str, c: UpstreamCounts, map_index: int) -> str | None:
    """The passing half: None when the rule is met, else why not (Airflow's wording)."""
    mapped = map_index > -1
    removed = c.removed if mapped else 0
    upstream_done = c.done >= c.upstream
    if rule == TriggerRule.ONE_SUCCESS:
        return None if c.success > 0 else "requires one upstream task success, but none were found"
    if rule == TriggerRule.ONE_FAILED:
        return None if (c.failed or c.upstream_failed) else "requires one upstream task failure, but none were found"
    if rule == TriggerRule.ONE_DONE:
        return None if c.success + c.failed > 0 else (
            "requires at least one upstream task failure or success but none were failed or success")
    if rule == TriggerRule.ALL_SUCCESS:
        num_failures = c.upstream - c.success - removed
        return None if num_failures <= 0 else (
            f"requires all upstream tasks to have succeeded, but found {num_failures} non-success(es)")
    if rule == TriggerRule.ALL_FAILED:
        num_success = c.upstream - c.failed - c.upstream_failed - removed
        return None if num_success <= 0 else (
            f"requires all upstream tasks to have failed, but found {num_success} non-failure(s)")
    if rule in (TriggerRule.ALL_DONE, TriggerRule.ALL_DONE_SETUP_SUCCESS):
        if not upstream_done:
            return (f"requires all upstream tasks to have completed, but found {c.upstream - c.done} task(s) "
                    f"that were not done")
        if rule == TriggerRule.ALL_DONE_SETUP_SUCCESS and c.setup and not c.success_setup:
            return (f"requires at least one upstream setup task be successful, but found "
                    f"{c.setup - c.success_setup} task(s) that were not")
        return None
    if rule in (TriggerRule.NONE_FAILED, TriggerRule.NONE_FAILED_MIN_ONE_SUCCESS):
        num_failures = c.upstream - c.success - c.skipped - removed
        if num_failures > 0:
            return (f"requires all upstream tasks to have succeeded or been skipped, but found {num_failures} "
                    f"non-success(es)")
        if rule == TriggerRule.NONE_FAILED_MIN_ONE_SUCCESS and c.success <= 0:
            return "requires at least one upstream task success, but none were found"
        return None
    if rule == TriggerRule.NONE_SKIPPED:
        return None if (upstream_done and c.skipped == 0) else (
            f"requires all upstream tasks to not have been skipped, but found {c.skipped} task(s) skipped")
    if rule == TriggerRule.ALL_SKIPPED:
        num_non_skipped = c.upstream - c.skipped
        return None if num_non_skipped <= 0 else (
            f"requires all upstream tasks to have been skipped, but found {num_non_skipped} task(s) in non "
            f"skipped state")
    if rule == TriggerRule.ALL_DONE_MIN_ONE_SUCCESS:
        non_skipped_done = c.success + c.failed + c.upstream_failed + c.removed - removed
        non_skipped_upstream = c.upstream - c.skipped - removed
        if c.skipped > 0:
            return (f"requires all non-skipped upstream tasks to have completed, but found {c.skipped} skipped "
                    f"task(s)")
        if non_skipped_done < non_skipped_upstream:
            return (f"requires all non-skipped upstream tasks to have completed, but found "
                    f"{non_skipped_upstream - non_skipped_done} task(s) that were not done")
        if c.success == 0:
            return ("requires all non-skipped upstream tasks to have completed and at least one upstream task "
                    "has succeeded, but found 0 successful task(s)")
        return None
    return "has no strategy to evaluate it"
