"""Rows Airflow 3's ``TriggerRuleDep._evaluate_direct_relatives`` decides that the main table
does not pin (the mapped ``removed`` discount, failures alone, rules that both pass and decide), and run states
from leaves as ``DagRun.update_state`` decides them (skipped leaves count as success, removed leaves not at all).
"""

from __future__ import annotations

import pytest
from helpers import START, FakeRunStore, make_run, serialized

from airflow.sdk import DAG, task
from updraft.model.states import DagRunState
from updraft.model.states import TaskInstanceState as S
from updraft.scheduling.decisions.deps.trigger_rule import UpstreamCounts, evaluate_trigger_rule

UF, SK = S.UPSTREAM_FAILED, S.SKIPPED


def c(success=0, skipped=0, failed=0, upstream_failed=0, removed=0, upstream=2):
    return UpstreamCounts(upstream=upstream, success=success, skipped=skipped, failed=failed,
                          upstream_failed=upstream_failed, removed=removed)


# (rule, counts, map_index, passes, new_state), each read off Airflow 3's code
ROWS = [
    # a mapped instance discounts removed upstreams; an unmapped one does not
    ("all_failed", c(failed=1, removed=1), 0, True, None),
    ("all_failed", c(failed=1, removed=1), -1, False, None),
    ("none_failed", c(success=1, removed=1), 0, True, None),
    ("none_failed", c(success=1, removed=1), -1, False, None),
    # ... but Airflow 3.3's none_failed_min_one_success also needs a success: all done without one is upstream_failed
    ("none_failed_min_one_success", c(skipped=1, removed=1), 0, False, UF),
    ("none_failed_min_one_success", c(success=1, removed=1), 0, True, None),
    ("all_done_min_one_success", c(success=1, removed=1), 0, True, None),
    ("all_done_min_one_success", c(failed=1, removed=1), -1, False, UF),
    # failures alone
    ("none_failed_min_one_success", c(failed=1), -1, False, UF),
    ("all_skipped", c(failed=1), -1, False, SK),
    ("none_skipped", c(skipped=1, failed=1), -1, False, SK),
    ("one_success", c(success=1, failed=1), -1, True, None),
    ("one_failed", c(skipped=2), -1, False, SK),
    ("one_done", c(upstream_failed=2), -1, False, SK),
    # removed counts as done for all_done
    ("all_done", c(removed=2), -1, True, None),
    ("always", c(upstream_failed=1), -1, True, None),
]


@pytest.mark.parametrize(("rule", "counts", "map_index", "passes", "new_state"), ROWS,
                         ids=[f"{r[0]}-{i}" for i, r in enumerate(ROWS)])
def test_airflow_rows_the_main_table_leaves_out(rule, counts, map_index, passes, new_state):
    result = evaluate_trigger_rule(rule, counts, map_index=map_index)
    assert result.status.passed is passes, result.status.reason
    assert result.new_state == new_state


def _fork():
    with DAG("d", schedule=None, start_date=START) as dag:
        @task
        def work():
            return None

        a = work.override(task_id="a")()
        a >> [work.override(task_id="x")(), work.override(task_id="y")()]
    return serialized(dag)


@pytest.mark.parametrize(("x", "y", "expected"), [
    (S.SUCCESS, S.SKIPPED, DagRunState.SUCCESS),  # a skipped leaf is a success state
    (S.SKIPPED, S.SKIPPED, DagRunState.SUCCESS),
    (S.SKIPPED, S.UPSTREAM_FAILED, DagRunState.FAILED),
    (S.REMOVED, S.SUCCESS, DagRunState.SUCCESS),  # a removed leaf does not count
    (S.REMOVED, S.FAILED, DagRunState.FAILED),
    (S.SKIPPED, S.RUNNING, None),
])
def test_run_state_from_two_leaves(x, y, expected):
    store = FakeRunStore(make_run())
    store.add("a", S.SUCCESS)
    store.add("x", x)
    store.add("y", y)
    assert store.evaluate(_fork()).run_state == expected
