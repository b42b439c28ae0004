"""Property-based tests of the pure scheduling decisions against a small reference model of Airflow's rules.

The reference below is written from Airflow's documentation of trigger rules ("Trigger Rules" in the core
concepts), on the list of upstream states, not on counts: a rule is *met* once its upstreams' states satisfy it;
a rule that no completion of the unfinished upstreams could meet ends the task (skipped or upstream_failed); a task
whose upstreams are all finished is never left waiting (the scheduler would stall on it forever).
"""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from updraft.model.states import TaskInstanceState
from updraft.scheduling.decisions.deps.trigger_rule import UpstreamCounts, evaluate_trigger_rule
from updraft.sdk.trigger_rule import TriggerRule

TI = TaskInstanceState
FINISHED = (TI.SUCCESS, TI.FAILED, TI.SKIPPED, TI.UPSTREAM_FAILED)
UNFINISHED = (None, TI.SCHEDULED, TI.QUEUED, TI.RUNNING, TI.UP_FOR_RETRY)
FAILED_ISH = (TI.FAILED, TI.UPSTREAM_FAILED)
RULES = [r for r in TriggerRule if r != TriggerRule.ALWAYS]


def reference_met(rule: TriggerRule, states: list[TI]) -> bool:
    """Whether ``rule`` lets the task run, all upstreams finished (Airflow's documented meaning)."""
    n = Counter(states)
    failed = n[TI.FAILED] + n[TI.UPSTREAM_FAILED]
    return {
        TriggerRule.ALL_SUCCESS: n[TI.SUCCESS] == len(states),
        TriggerRule.ALL_FAILED: failed == len(states),
        TriggerRule.ALL_DONE: True,
        TriggerRule.ALL_DONE_SETUP_SUCCESS: True,  # no setup tasks in Updraft: as all_done
        TriggerRule.ALL_DONE_MIN_ONE_SUCCESS: n[TI.SKIPPED] == 0 and n[TI.SUCCESS] >= 1,
        TriggerRule.ALL_SKIPPED: n[TI.SKIPPED] == len(states),
        TriggerRule.ONE_SUCCESS: n[TI.SUCCESS] >= 1,
        TriggerRule.ONE_FAILED: failed >= 1,
        TriggerRule.ONE_DONE: n[TI.SUCCESS] + n[TI.FAILED] >= 1,
        TriggerRule.NONE_FAILED: failed == 0,
        TriggerRule.NONE_FAILED_MIN_ONE_SUCCESS: failed == 0 and n[TI.SUCCESS] >= 1,
        TriggerRule.NONE_SKIPPED: n[TI.SKIPPED] == 0,
    }[rule]


def reference_end_state(rule: TriggerRule, states: list[TI]) -> TI:
    """The state a task whose rule can never be met takes: upstream_failed where a failure is the reason
    (the rules that want successes), skipped otherwise."""
    n = Counter(states)
    if rule in (TriggerRule.ALL_SUCCESS, TriggerRule.NONE_FAILED, TriggerRule.NONE_FAILED_MIN_ONE_SUCCESS):
        return TI.UPSTREAM_FAILED if n[TI.FAILED] + n[TI.UPSTREAM_FAILED] else TI.SKIPPED
    if rule == TriggerRule.ONE_SUCCESS:
        return TI.SKIPPED if n[TI.SKIPPED] == len(states) else TI.UPSTREAM_FAILED
    if rule == TriggerRule.ALL_DONE_MIN_ONE_SUCCESS:
        return TI.SKIPPED if n[TI.SKIPPED] else TI.UPSTREAM_FAILED
    return TI.SKIPPED


def counts(states: list[TI | None]) -> UpstreamCounts:
    n = Counter(states)
    return UpstreamCounts(upstream=len(states), success=n[TI.SUCCESS], skipped=n[TI.SKIPPED], failed=n[TI.FAILED],
                          upstream_failed=n[TI.UPSTREAM_FAILED])


def completions(states: list[TI | None]) -> list[list[TI]]:
    """Every way the unfinished upstreams may still finish."""
    done = [s for s in states if s in FINISHED]
    waiting = len(states) - len(done)
    return [done + list(rest) for rest in itertools.combinations_with_replacement(FINISHED, waiting)]


upstream_states = st.lists(st.sampled_from(FINISHED + UNFINISHED), min_size=1, max_size=5)


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(rule=st.sampled_from(RULES), states=upstream_states)
def test_trigger_rules_agree_with_the_reference(rule, states):
    result = evaluate_trigger_rule(rule, counts(states))
    possible = completions(states)
    if all(s in FINISHED for s in states):
        # Finished upstreams: the rule is met exactly when the reference says so, and never left waiting.
        met = reference_met(rule, states)
        assert result.new_state is None if met else result.new_state == reference_end_state(rule, states), (
            rule, states, result)
        assert result.status.passed == met or result.new_state is not None
        return
    if result.status.passed and result.new_state is None:
        # Run before every upstream finished: only when every way they may finish meets the rule.
        assert all(reference_met(rule, c) for c in possible), (rule, states)
    if result.new_state is not None:
        # Ended early: only when no way they may finish meets it, and in a state one of those would end in (as
        # Airflow, the first reason seen wins: all_success after a skip is skipped, whatever fails later).
        assert not any(reference_met(rule, c) for c in possible), (rule, states)
        assert result.new_state in {reference_end_state(rule, c) for c in possible}, (rule, states, result)

