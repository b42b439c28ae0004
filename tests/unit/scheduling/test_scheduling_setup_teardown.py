"""Setup and teardown tasks in the scheduler, as Airflow 3.3's ``TriggerRuleDep`` and ``DagRun.update_state`` decide
them: the teardown rule's table, the setup constraint of work tasks, the teardown scope, the run state (teardowns
are not leaves unless ``on_failure_fail_dagrun``), which tasks a clear adds, and fail_fast sparing teardowns.

Expected values are read off ``ti_deps/deps/trigger_rule_dep.py`` (``_evaluate_setup_constraint``,
``_evaluate_direct_relatives`` for ``all_done_setup_success``, ``_evaluate_teardown_scope``), ``models/dagrun.py``
(``_tis_for_dagrun_state``) and ``serialization/definitions/dag.py`` (``partial_subset``).
"""

from __future__ import annotations

import pytest
from helpers import START, FakeRunStore, make_run, serialized

from airflow.providers.standard.operators.bash import BashOperator
from airflow.sdk import DAG, setup, task, teardown
from updraft.model.states import DagRunState
from updraft.model.states import TaskInstanceState as S
from updraft.scheduling.decisions.clearing import Selection, with_relatives
from updraft.scheduling.decisions.deps.setup_teardown import (
    ScopeCounts,
    combine,
    evaluate_setup_constraint,
    evaluate_teardown_scope,
)
from updraft.scheduling.decisions.deps.trigger_rule import UpstreamCounts, evaluate_trigger_rule
from updraft.scheduling.decisions.run_state import leaf_task_ids

UF, SK, RM = S.UPSTREAM_FAILED, S.SKIPPED, S.REMOVED


def c(success=0, skipped=0, failed=0, upstream_failed=0, removed=0, upstream=2, setup=0, success_setup=0,
      skipped_setup=0):
    return UpstreamCounts(upstream=upstream, success=success, skipped=skipped, failed=failed,
                          upstream_failed=upstream_failed, removed=removed, setup=setup,
                          success_setup=success_setup, skipped_setup=skipped_setup)


# -- pure decisions ----------------------------------------------------------------------------------------------
# (counts of the teardown's direct upstream, passes, new state)
TEARDOWN_RULE = [
    (c(success=1, failed=1, setup=1, success_setup=1), True, None),  # the work failed, the setup ran: tear down
    (c(failed=2, setup=1), False, UF),  # the setup failed too: nothing to tear down
    (c(skipped=1, upstream_failed=1, setup=1, skipped_setup=1), False, SK),  # every setup skipped
    (c(success=1, setup=1, success_setup=1), False, None),  # the work is still running
    (c(success=1, failed=1, upstream=3, setup=2, success_setup=1), False, None),  # one setup not done yet
    (c(success=1, failed=2, upstream=3, setup=2, success_setup=1), True, None),  # one of two setups ran
    (c(failed=2), True, None),  # no setup upstream: all_done
]


@pytest.mark.parametrize(("counts", "passes", "new_state"), TEARDOWN_RULE)
def test_all_done_setup_success(counts, passes, new_state):
    result = evaluate_trigger_rule("all_done_setup_success", counts)
    assert result.status.passed is passes, result.status.reason
    assert result.new_state == new_state


def test_the_teardown_rule_says_which_setup_did_not_succeed():
    reason = evaluate_trigger_rule("all_done_setup_success", c(failed=2, setup=2)).status.reason
    assert "requires at least one upstream setup task be successful, but found 2 task(s)" in reason


# (counts of a work task's indirect setups, map index, None = no constraint | (passes, new state))
SETUP_CONSTRAINT = [
    (c(success=1, upstream=1), -1, None),
    (c(upstream=1), -1, (False, None)),  # waits for the setup to succeed
    (c(failed=1, upstream=1), -1, (False, UF)),
    (c(upstream_failed=1, upstream=1), -1, (False, UF)),
    (c(skipped=1, upstream=1), -1, (False, SK)),
    (c(success=1, skipped=1), -1, (False, SK)),  # does not wait for every setup to finish
    (c(success=1, removed=1), 1, (False, RM)),  # mapped setups: an index beyond the surviving ones
    (c(success=1, removed=1), 0, None),
]


@pytest.mark.parametrize(("counts", "map_index", "expected"), SETUP_CONSTRAINT)
def test_setup_constraint(counts, map_index, expected):
    result = evaluate_setup_constraint(counts, relevant=["s"], map_index=map_index)
    if expected is None:
        assert result is None
        return
    assert (result.status.passed, result.new_state) == expected
    assert result.status.reason.startswith("All setup tasks must complete successfully. Relevant setups: ['s']")


def test_a_state_the_setup_constraint_decides_wins_and_otherwise_the_direct_rule_may_still_decide():
    direct = evaluate_trigger_rule("all_success", c(success=1, failed=1))
    waiting = evaluate_setup_constraint(c(upstream=1), relevant=["s"])
    failed = evaluate_setup_constraint(c(skipped=1, upstream=1), relevant=["s"])
    assert combine(direct, None) is direct
    assert combine(direct, failed).new_state == SK
    both = combine(direct, waiting)
    assert (both.status, both.new_state) == (waiting.status, UF)


def test_teardown_scope():
    assert evaluate_teardown_scope("all_done_setup_success", ScopeCounts(expected=2, done=2), ["a", "b"]) is None
    waiting = evaluate_teardown_scope("all_done_setup_success", ScopeCounts(expected=2, done=1), ["a", "b"])
    assert not waiting.status.passed and "found 1 in-scope task(s) not done" in waiting.status.reason


# -- a run's evaluation ------------------------------------------------------------------------------------------
def op(task_id, **kwargs):
    """A task that needs a worker (an EmptyOperator would finish in the scheduler)."""
    return BashOperator(task_id=task_id, bash_command="true", **kwargs)


def _dag(*, fail_dagrun=False, fail_fast=False):
    """create >> work >> delete (the teardown of create), and work >> report."""
    with DAG("d", schedule=None, start_date=START, fail_fast=fail_fast) as dag:
        create = op("create").as_setup()
        work = op("work")
        delete = op("delete").as_teardown(setups=create, on_failure_fail_dagrun=fail_dagrun)
        report = op("report")
        create >> work >> delete
        work >> report
    return serialized(dag)


def _store(**states):
    store = FakeRunStore(make_run())
    for task_id, state in states.items():
        store.add(task_id, state, try_number=1)
    return store


def test_the_serialized_dag_keeps_the_flags():
    dag = _dag(fail_dagrun=True)
    create, delete, work = (dag.task_dict[t] for t in ("create", "delete", "work"))
    assert (create.is_setup, create.is_teardown, delete.is_teardown, delete.on_failure_fail_dagrun) == (
        True, False, True, True)
    assert delete.trigger_rule == "all_done_setup_success" and not work.is_setup and not work.is_teardown


def test_a_teardown_runs_after_its_work_failed_and_the_run_fails_for_the_work():
    dag = _dag()
    store = _store(create=S.SUCCESS, work=S.FAILED)
    evaluation = store.evaluate(dag)
    assert store.states()["delete"] == "scheduled" and store.states()["report"] == "upstream_failed"
    assert evaluation.run_state is None  # waits for the teardown
    store.set("delete", S.SUCCESS)
    assert store.evaluate(dag).run_state == DagRunState.FAILED  # work's failure decides (report is a leaf)


@pytest.mark.parametrize(("fail_dagrun", "run_state"), [(False, DagRunState.SUCCESS), (True, DagRunState.FAILED)])
def test_a_failed_teardown_fails_the_run_only_with_on_failure_fail_dagrun(fail_dagrun, run_state):
    dag = _dag(fail_dagrun=fail_dagrun)
    store = _store(create=S.SUCCESS, work=S.SUCCESS, report=S.SUCCESS, delete=S.FAILED)
    assert store.evaluate(dag).run_state == run_state


def test_a_failed_setup_fails_its_work_and_its_teardown():
    dag = _dag()
    store = _store(create=S.FAILED)
    assert store.evaluate(dag).run_state == DagRunState.FAILED
    assert store.states() == {"create": "failed", "delete": "upstream_failed", "report": "upstream_failed",
                              "work": "upstream_failed"}


def test_a_skipped_setup_skips_its_teardown():
    dag = _dag()
    store = _store(create=S.SKIPPED)
    assert store.evaluate(dag).run_state == DagRunState.SUCCESS
    assert set(store.states().values()) == {"skipped"}


def test_a_work_task_waits_for_an_indirect_setup_then_follows_it():
    """b's direct upstream (a) succeeded, but create (cleared) encloses b: b waits, then is upstream_failed when
    create fails. report is outside create's scope (delete is not downstream of it) and does not wait."""
    with DAG("d", schedule=None, start_date=START) as built:
        create = op("create").as_setup()
        a, b, report = op("a"), op("b"), op("report")
        create >> a >> b >> op("delete").as_teardown(setups=create)
        a >> report
    dag = serialized(built)
    store = _store(create=None, a=S.SUCCESS)
    evaluation = store.evaluate(dag)
    blocked_b = next(k for k in evaluation.blocked if k.task_id == "b")
    assert "All setup tasks must complete successfully. Relevant setups: ['create']" in \
        evaluation.blocked[blocked_b][0].reason
    assert store.states()["report"] == "scheduled"
    store.set("create", S.FAILED)
    store.evaluate(dag)
    assert store.states()["b"] == "upstream_failed"


def test_a_teardown_waits_for_its_whole_scope():
    with DAG("d", schedule=None, start_date=START) as built:
        create = op("create").as_setup()
        delete = op("delete").as_teardown(setups=create)
        slow = op("slow")
        fast = op("fast", trigger_rule="always")
        create >> slow >> fast >> delete
    dag = serialized(built)
    store = _store(create=S.SUCCESS, fast=S.SUCCESS, slow=S.RUNNING)
    evaluation = store.evaluate(dag)
    delete = next(k for k in evaluation.blocked if k.task_id == "delete")
    assert "in_scope_task_ids=['slow']" in evaluation.blocked[delete][-1].reason
    store.set("slow", S.SUCCESS)
    store.evaluate(dag)
    assert store.states()["delete"] == "scheduled"


def test_fail_fast_stops_the_work_but_lets_the_teardown_run():
    dag = _dag(fail_fast=True)
    store = _store(create=S.SUCCESS, work=S.FAILED)
    assert store.evaluate(dag).run_state is None
    assert store.states()["report"] == "skipped" and store.states()["delete"] == "scheduled"
    store.set("delete", S.SUCCESS)
    evaluation = store.evaluate(dag)
    assert evaluation.run_state == DagRunState.FAILED and evaluation.run_note.startswith("fail_fast")


def test_leaves_exclude_teardowns():
    assert leaf_task_ids(_dag().task_dict) == {"report"}
    with DAG("d", schedule=None, start_date=START) as built:
        create = op("create").as_setup()
        create >> op("work") >> op("delete").as_teardown(setups=create)
    assert leaf_task_ids(serialized(built).task_dict) == {"work"}  # followed only by an ignorable teardown
    assert leaf_task_ids(_dag(fail_dagrun=True).task_dict) == {"delete", "report"}
    with DAG("d", schedule=None, start_date=START) as only_teardowns:
        op("a").as_teardown() >> op("b").as_teardown()
    assert leaf_task_ids(serialized(only_teardowns).task_dict) == {"b"}


# -- clear ------------------------------------------------------------------------------------------------------
def _cleared(dag, task_ids, **flags):
    return set(with_relatives(dag, Selection(frozenset(task_ids)), **flags).task_ids)


def test_clearing_a_work_task_clears_its_setup_and_teardown():
    dag = _dag()
    assert _cleared(dag, ["work"], upstream=False, downstream=True) == {"create", "work", "delete", "report"}
    assert _cleared(dag, ["report"], upstream=False, downstream=True) == {"report"}  # outside create's scope
    assert _cleared(dag, ["report"], upstream=True, downstream=False) == {"create", "work", "report", "delete"}
    # Airflow's REST clear adds relatives (and so setups) only when a direction is asked for.
    assert _cleared(dag, ["work"], upstream=False, downstream=False) == {"work"}


def test_clearing_a_setup_clears_its_teardown_and_an_unrelated_setup_stays():
    with DAG("d", schedule=None, start_date=START) as built:
        @setup
        def make():
            return 1

        @teardown
        def drop(x):
            return None

        @task
        def use(x):
            return x

        other = op("other").as_setup()
        made = make()
        use(made) >> drop(made)
        other >> op("elsewhere")
    dag = serialized(built)
    assert _cleared(dag, ["make"], upstream=True, downstream=False) == {"make", "drop"}
    assert _cleared(dag, ["use"], upstream=False, downstream=True) == {"make", "use", "drop"}
