"""Every Airflow 3 trigger rule against upstream state combinations, with the outcome Airflow's TriggerRuleDep gives.

Each row: upstream instance counts, then whether the rule passes and which state (if any) the instance must take
because it can never run. Expected values are read off Airflow's ``_evaluate_direct_relatives``.
"""

from __future__ import annotations

import pytest
from helpers import START, FakeRunStore, make_run, serialized

from airflow.sdk import DAG, task
from updraft.model.states import TaskInstanceState as S
from updraft.scheduling.decisions.deps.trigger_rule import TriggerRule, UpstreamCounts, evaluate_trigger_rule

UF, SK, RM = S.UPSTREAM_FAILED, S.SKIPPED, S.REMOVED


def c(success=0, skipped=0, failed=0, upstream_failed=0, removed=0, upstream=2):
    return UpstreamCounts(upstream=upstream, success=success, skipped=skipped, failed=failed,
                          upstream_failed=upstream_failed, removed=removed)


# (rule, counts, map_index, passes, new_state)
TABLE = [
    # all_success: every upstream succeeded; a failure means upstream_failed, a skip means skipped
    ("all_success", c(success=2), -1, True, None),
    ("all_success", c(success=1), -1, False, None),  # one still running
    ("all_success", c(success=1, failed=1), -1, False, UF),
    ("all_success", c(upstream_failed=1), -1, False, UF),  # does not wait for the other
    ("all_success", c(success=1, skipped=1), -1, False, SK),
    ("all_success", c(skipped=1, failed=1), -1, False, UF),  # failure wins over skip
    ("all_success", c(success=1, removed=1), 1, True, RM),  # map index beyond the surviving upstreams
    ("all_success", c(success=1, removed=1), 0, True, None),
    ("all_success", c(success=1, removed=1), -1, False, None),
    # all_failed
    ("all_failed", c(failed=2), -1, True, None),
    ("all_failed", c(failed=1, upstream_failed=1), -1, True, None),
    ("all_failed", c(success=1, failed=1), -1, False, SK),
    ("all_failed", c(skipped=1, failed=1), -1, False, SK),
    ("all_failed", c(failed=1), -1, False, None),
    # all_done
    ("all_done", c(success=1, failed=1), -1, True, None),
    ("all_done", c(skipped=1, upstream_failed=1), -1, True, None),
    ("all_done", c(success=1), -1, False, None),
    # all_done_min_one_success: skipped upstreams are not "done"
    ("all_done_min_one_success", c(success=1, failed=1), -1, True, None),
    ("all_done_min_one_success", c(failed=2), -1, False, UF),
    ("all_done_min_one_success", c(success=1, skipped=1), -1, False, SK),
    ("all_done_min_one_success", c(skipped=1), -1, False, SK),  # even before the other finishes
    ("all_done_min_one_success", c(success=1), -1, False, None),
    # all_done_setup_success: without setup tasks it is all_done
    ("all_done_setup_success", c(failed=2), -1, True, None),
    ("all_done_setup_success", c(success=1), -1, False, None),
    # one_success
    ("one_success", c(success=1), -1, True, None),
    ("one_success", c(skipped=2), -1, False, SK),
    ("one_success", c(skipped=1, failed=1), -1, False, UF),
    ("one_success", c(failed=1), -1, False, None),
    # one_failed
    ("one_failed", c(failed=1), -1, True, None),
    ("one_failed", c(upstream_failed=1), -1, True, None),
    ("one_failed", c(success=2), -1, False, SK),
    ("one_failed", c(success=1, skipped=1), -1, False, SK),
    ("one_failed", c(success=1), -1, False, None),
    # one_done: a success or a failure (upstream_failed and skipped do not count)
    ("one_done", c(success=1), -1, True, None),
    ("one_done", c(failed=1), -1, True, None),
    ("one_done", c(skipped=2), -1, False, SK),
    ("one_done", c(skipped=1, upstream_failed=1), -1, False, SK),
    ("one_done", c(skipped=1), -1, False, None),
    # none_failed
    ("none_failed", c(success=1, skipped=1), -1, True, None),
    ("none_failed", c(skipped=2), -1, True, None),
    ("none_failed", c(success=1, failed=1), -1, False, UF),
    ("none_failed", c(success=1), -1, False, None),
    # none_failed_min_one_success: all skipped -> skipped; Airflow 3.3 also fails the rule without a success
    ("none_failed_min_one_success", c(success=1, skipped=1), -1, True, None),
    ("none_failed_min_one_success", c(skipped=2), -1, False, SK),
    # Airflow 3.3's all-done-no-success branch: every upstream done, none succeeded -> upstream_failed
    ("none_failed_min_one_success", c(skipped=1, removed=1), -1, False, UF),
    ("none_failed_min_one_success", c(removed=2), -1, False, UF),
    ("none_failed_min_one_success", c(skipped=1, upstream_failed=1), -1, False, UF),
    ("none_failed_min_one_success", c(skipped=1), -1, False, None),
    # none_skipped
    ("none_skipped", c(success=1, failed=1), -1, True, None),
    ("none_skipped", c(success=1, skipped=1), -1, False, SK),
    ("none_skipped", c(success=1), -1, False, None),
    # all_skipped
    ("all_skipped", c(skipped=2), -1, True, None),
    ("all_skipped", c(success=1, skipped=1), -1, False, SK),
    ("all_skipped", c(skipped=1, upstream_failed=1), -1, False, SK),
    ("all_skipped", c(skipped=1), -1, False, None),
    # always
    ("always", c(failed=2), -1, True, None),
    ("always", c(), -1, True, None),
]


@pytest.mark.parametrize(("rule", "counts", "map_index", "passes", "new_state"), TABLE,
                         ids=[f"{r[0]}-{i}" for i, r in enumerate(TABLE)])
def test_trigger_rule_table(rule, counts, map_index, passes, new_state):
    result = evaluate_trigger_rule(rule, counts, map_index=map_index)
    assert result.status.passed is passes, result.status.reason
    assert result.new_state == new_state


def test_the_table_covers_all_thirteen_rules():
    assert {row[0] for row in TABLE} == {r.value for r in TriggerRule}
    assert len(TriggerRule) == 13


def test_no_upstream_always_passes_and_an_unknown_rule_never_does():
    assert evaluate_trigger_rule("all_success", None).status.passed
    unknown = evaluate_trigger_rule("dummy", c(success=2))
    assert not unknown.status.passed and "no strategy" in unknown.status.reason


def test_reasons_name_the_rule_and_the_counts():
    reason = evaluate_trigger_rule("all_success", c(success=1)).status.reason
    assert "'all_success'" in reason and "success=1" in reason and "upstream=2" in reason


def _mapped_upstream_dag(rule):
    with DAG("d", schedule=None, start_date=START) as dag:
        @task
        def each(x):
            return x

        @task(trigger_rule=rule)
        def after():
            return None

        each.expand(x=[1, 2, 3]) >> after()
    return serialized(dag)


@pytest.mark.parametrize(("rule", "states", "expected"), [
    ("all_success", [S.SUCCESS, S.SUCCESS, S.RUNNING], None),  # waits for every instance
    ("all_success", [S.SUCCESS, S.SUCCESS, S.SUCCESS], "scheduled"),
    ("all_success", [S.SUCCESS, S.FAILED, S.RUNNING], "upstream_failed"),
    ("all_done", [S.SUCCESS, S.FAILED, S.RUNNING], None),
    ("all_done", [S.SUCCESS, S.FAILED, S.SKIPPED], "scheduled"),
    ("one_failed", [S.SUCCESS, S.SUCCESS, S.SUCCESS], "skipped"),
    ("none_failed_min_one_success", [S.SKIPPED, S.SKIPPED, S.SKIPPED], "skipped"),
    ("none_failed_min_one_success", [S.SKIPPED, S.REMOVED, S.REMOVED], "upstream_failed"),  # Airflow 3.3
    ("none_failed_min_one_success", [S.SUCCESS, S.SKIPPED, S.REMOVED], None),  # mapped removed not discounted
])
def test_every_map_instance_of_a_mapped_upstream_counts(rule, states, expected):
    dag = _mapped_upstream_dag(rule)
    store = FakeRunStore(make_run())
    for i, state in enumerate(states):
        store.add("each", state, i)
    store.evaluate(dag)
    assert store.states().get("after") == expected


def test_an_unexpanded_mapped_upstream_counts_as_one_unfinished_instance():
    with DAG("d", schedule=None, start_date=START) as dag:
        @task
        def gen():
            return [1, 2, 3]

        @task
        def each(x):
            return x

        @task(trigger_rule="all_done")
        def after():
            return None

        each.expand(x=gen()) >> after()
    store = FakeRunStore(make_run())
    evaluation = store.evaluate(serialized(dag))
    assert store.states() == {"gen": "scheduled"}
    [status] = [s for k, v in evaluation.blocked.items() if k.task_id == "after" for s in v]
    assert "upstream=1" in status.reason and "done=0" in status.reason


def test_a_literal_expansion_is_counted_in_the_same_evaluation():
    evaluation = FakeRunStore(make_run()).evaluate(_mapped_upstream_dag("all_done"))
    [status] = [s for k, v in evaluation.blocked.items() if k.task_id == "after" for s in v]
    assert "upstream=3" in status.reason
