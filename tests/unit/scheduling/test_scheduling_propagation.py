"""One evaluation marks a whole branch: failures, branch and short-circuit skips travel the graph at once."""

from __future__ import annotations

import pytest
from helpers import NOW, START, FakeRunStore, make_run, make_ti, serialized

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.providers.standard.operators.python import BranchPythonOperator, ShortCircuitOperator
from airflow.sdk import DAG, TaskGroup, task
from updraft.model.states import DagRunState
from updraft.model.states import TaskInstanceState as S
from updraft.scheduling.decisions.skips import branch_skips, deepest_first, short_circuit_skips
from updraft.scheduling.try_lifecycle import TryResult, finish_try


@task
def work():
    return None


def _chain(n=4, **kwargs):
    with DAG("d", schedule=None, start_date=START, **kwargs) as dag:
        prev = None
        for i in range(n):
            cur = work.override(task_id=f"t{i}")()
            if prev is not None:
                prev >> cur
            prev = cur
    return serialized(dag)


def test_roots_are_scheduled_with_their_pool_priority_and_executor():
    with DAG("d", schedule=None, start_date=START) as dag:
        work.override(task_id="a", pool="p", pool_slots=2, priority_weight=7)() >> work.override(task_id="b")()
    store = FakeRunStore(make_run())
    evaluation = store.evaluate(serialized(dag))
    [change] = evaluation.changes
    assert change.expected is None and change.state == S.SCHEDULED
    assert change.fields == {"pool": "p", "pool_slots": 2, "priority_weight": 8, "executor": "lambda"}
    assert evaluation.scheduled == [change.key]
    assert evaluation.run_state is None


def test_a_failure_marks_the_whole_chain_upstream_failed_in_one_evaluation():
    dag = _chain(5)
    store = FakeRunStore(make_run())
    store.add("t0", S.SUCCESS)
    store.add("t1", S.FAILED)
    evaluation = store.evaluate(dag)
    assert store.states() == {"t0": "success", "t1": "failed", "t2": "upstream_failed",
                              "t3": "upstream_failed", "t4": "upstream_failed"}
    assert [c.key.task_id for c in evaluation.changes] == ["t2", "t3", "t4"]  # upstream first
    assert all(c.fields["end_date"] == NOW and "trigger rule" in c.fields["note"] for c in evaluation.changes)
    assert evaluation.run_state == DagRunState.FAILED
    assert evaluation.run_note == "task_failure: t1 failed"


def test_empty_operators_finish_in_the_scheduler_and_their_downstream_is_scheduled_at_once():
    with DAG("d", schedule=None, start_date=START) as dag:
        EmptyOperator(task_id="start") >> EmptyOperator(task_id="mid") >> work.override(task_id="real")()
    store = FakeRunStore(make_run())
    evaluation = store.evaluate(serialized(dag))
    assert store.states() == {"mid": "success", "real": "scheduled", "start": "success"}
    start = store.items[evaluation.changes[0].key]
    assert start.try_number == 1 and start.start_date == start.end_date == NOW


def test_an_empty_operator_with_a_success_callback_needs_a_worker():
    with DAG("d", schedule=None, start_date=START) as dag:
        EmptyOperator(task_id="e", on_success_callback=lambda ctx: None)
    store = FakeRunStore(make_run())
    store.evaluate(serialized(dag))
    assert store.states() == {"e": "scheduled"}


def _branch_dag(shape):
    with DAG("d", schedule=None, start_date=START) as dag:
        branch = BranchPythonOperator(task_id="branch", python_callable=lambda: "a")
        if shape == "diamond":
            a, b = work.override(task_id="a")(), work.override(task_id="b")()
            join = work.override(task_id="join")()  # all_success: skipped when a branch is skipped
            branch >> [a, b] >> join
        elif shape == "join_after_branch":
            a, b = work.override(task_id="a")(), work.override(task_id="b")()
            b2 = work.override(task_id="b2")()
            join = work.override(task_id="join", trigger_rule="none_failed_min_one_success")()
            branch >> [a, b]
            b >> b2
            [a, b2] >> join
        else:  # chain
            a = work.override(task_id="a")()
            b, c = work.override(task_id="b")(), work.override(task_id="c")()
            branch >> [a, b]
            b >> c
    return serialized(dag)


def _after_branch(dag, followed):
    store = FakeRunStore(make_run())
    store.add("branch", S.SUCCESS)
    for task_id in branch_skips(dag, "branch", followed):
        store.set(task_id, S.SKIPPED)  # what the worker's report applies
    store.evaluate(dag)
    return store


def test_branch_in_a_diamond_skips_the_other_branch_and_the_join():
    dag = _branch_dag("diamond")
    assert branch_skips(dag, "branch", "a") == {"b"}
    assert _after_branch(dag, ["a"]).states() == {"a": "scheduled", "b": "skipped", "branch": "success",
                                                  "join": "skipped"}


def test_branch_skip_travels_down_a_chain_in_one_evaluation():
    dag = _branch_dag("chain")
    assert _after_branch(dag, "a").states() == {"a": "scheduled", "b": "skipped", "branch": "success",
                                                "c": "skipped"}


def test_a_join_with_none_failed_min_one_success_runs_after_the_followed_branch():
    dag = _branch_dag("join_after_branch")
    store = _after_branch(dag, "a")
    assert store.states() == {"a": "scheduled", "b": "skipped", "b2": "skipped", "branch": "success"}
    store.set("a", S.SUCCESS)
    store.evaluate(dag)
    assert store.states()["join"] == "scheduled"


def test_branch_to_none_skips_every_direct_downstream():
    dag = _branch_dag("diamond")
    assert branch_skips(dag, "branch", None) == {"a", "b"}
    assert _after_branch(dag, []).states()["join"] == "skipped"


def test_a_followed_task_downstream_of_another_followed_one_is_not_skipped():
    with DAG("d", schedule=None, start_date=START) as dag:
        branch = BranchPythonOperator(task_id="branch", python_callable=lambda: "a")
        a, join = work.override(task_id="a")(), work.override(task_id="join")()
        branch >> [a, join]
        a >> join
    assert branch_skips(serialized(dag), "branch", "a") == set()


def test_branch_to_a_task_group_follows_its_roots_even_by_relative_id():
    with DAG("d", schedule=None, start_date=START) as dag, TaskGroup("outer"):
        branch = BranchPythonOperator(task_id="branch", python_callable=lambda: "g")
        with TaskGroup("g") as g:
            first = work.override(task_id="first")()
            first >> work.override(task_id="second")()
        other = work.override(task_id="other")()
        branch >> [g, other]
    dag = serialized(dag)
    assert branch_skips(dag, "outer.branch", "outer.g") == {"outer.other"}
    assert branch_skips(dag, "outer.branch", ["g"]) == {"outer.other"}
    assert branch_skips(dag, "outer.branch", "other") == {"outer.g.first"}


def test_branch_to_an_unknown_task_is_an_error():
    with pytest.raises(ValueError, match="valid task_ids"):
        branch_skips(_branch_dag("diamond"), "branch", "nope")


def _short_circuit_dag(ignore):
    with DAG("d", schedule=None, start_date=START) as dag:
        sc = ShortCircuitOperator(task_id="sc", python_callable=lambda: False,
                                  ignore_downstream_trigger_rules=ignore)
        a, b = work.override(task_id="a")(), work.override(task_id="b")()
        done = work.override(task_id="done", trigger_rule="all_done")()
        sc >> a >> b >> done
    return serialized(dag)


def test_short_circuit_ignoring_trigger_rules_skips_everything_downstream():
    dag = _short_circuit_dag(True)
    assert short_circuit_skips(dag, "sc") == {"a", "b", "done"}


def test_a_decisions_skips_are_written_deepest_first():
    """Each skip is its own write: a pass between two of them that read ``b`` skipped but ``done`` not yet would
    run ``done`` (all_done), which the short-circuit skips. Written deepest first, it never can."""
    dag = _short_circuit_dag(True)
    assert deepest_first(dag, {"a", "b", "done"}) == ["done", "b", "a"]
    assert deepest_first(dag, ["a", "gone", "done"]) == ["done", "a", "gone"]

    class Store:
        def __init__(self):
            self.writes = []

        def create_ti(self, key, *, state, fields=None, waiting_index=False):
            self.writes.append(key.task_id)
            return True

        def end_try(self, key, *, try_id, state, fields):
            self.writes.append(f"end {key.task_id}")
            return True

    store = Store()
    running = make_ti(make_run(), "sc", S.RUNNING, try_id="t1")
    finish_try(store, running.key, "t1", TryResult(S.SUCCESS, skip_task_ids=["a", "b", "done"]), now=NOW, dag=dag,
               started=running)
    assert store.writes == ["done", "b", "a", "end sc"]


def test_short_circuit_respecting_trigger_rules_skips_the_direct_downstream_and_lets_rules_decide():
    dag = _short_circuit_dag(False)
    assert short_circuit_skips(dag, "sc") == {"a"}
    store = FakeRunStore(make_run())
    store.add("sc", S.SUCCESS)
    store.set("a", S.SKIPPED)
    store.evaluate(dag)
    # b is skipped by its all_success rule; done (all_done) runs once everything upstream is finished.
    assert store.states() == {"a": "skipped", "b": "skipped", "done": "scheduled", "sc": "success"}


def test_a_run_that_is_not_running_decides_nothing_and_says_why():
    store = FakeRunStore(make_run(state=DagRunState.QUEUED))
    evaluation = store.evaluate(_chain(2))
    assert evaluation.changes == [] and evaluation.run_state is None
    assert {k.task_id for k in evaluation.blocked} == {"t0", "t1"}
    assert all(s[0].name == "Dagrun Running" for s in evaluation.blocked.values())


def test_a_run_whose_logical_date_is_in_the_future_waits():
    store = FakeRunStore(make_run(logical_date=NOW.replace(year=2030)))
    evaluation = store.evaluate(_chain(1))
    assert evaluation.changes == [] and "future" in evaluation.blocked[next(iter(evaluation.blocked))][0].reason


def test_a_task_outside_its_start_date_has_no_instance_in_the_run():
    with DAG("d", schedule=None, start_date=START) as dag:
        work.override(task_id="early")()
        work.override(task_id="late", start_date=START.replace(year=2025))()
    store = FakeRunStore(make_run(logical_date=START.replace(month=2)))
    store.evaluate(serialized(dag))
    assert store.states() == {"early": "scheduled"}


def test_evaluation_is_idempotent_once_applied():
    dag = _chain(3)
    store = FakeRunStore(make_run())
    store.add("t0", S.FAILED)
    store.evaluate(dag)
    run = make_run()
    run.state = DagRunState.RUNNING
    again = FakeRunStore(run, store.tis()).evaluate(dag)
    assert again.changes == []
