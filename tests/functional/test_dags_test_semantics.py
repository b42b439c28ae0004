"""`updraft dags test` gives the states and try numbers Airflow 3.3 gives for the same DAG.

Each DAG in ``dags_test_semantics/`` is written as an Airflow user writes it and run once (module-scoped) through
``run_dag_test``; the test asserts the whole ``{label: (state, try_number)}`` table and the run state. try_number
counts the tries that started: 0 for an instance the scheduler skipped or marked upstream_failed, 1 for a task that
ran and raised AirflowSkipException. Values the tasks compute (XComs, templates) are checked by downstream tasks
that raise AirflowFailException when a value is wrong, so a wrong value shows up as a failed state here.

The expected tables follow Airflow's ``airflow-core/src/airflow/ti_deps/deps/trigger_rule_dep.py``
(``_evaluate_direct_relatives``: the ``flag_upstream_failed`` block decides skipped / upstream_failed, the second
block when the task may run), ``SkipMixin.skip_all_except`` / ``BranchMixIn.do_branch`` and
``ShortCircuitOperator.execute``.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from updraft.local.dag_test import run_dag_test

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fast_dags_test_ticks")]

FOLDER = Path(__file__).parent / "dags_test_semantics"
LOGICAL_DATE = dt.datetime(2024, 3, 5, tzinfo=dt.UTC)

OK, SKIP, UF, FAIL = ("success", 1), ("skipped", 0), ("upstream_failed", 0), ("failed", 1)


def _run(dag_id: str, **kwargs):
    result = run_dag_test(dag_id, dags_folder=str(FOLDER), logical_date=LOGICAL_DATE, **kwargs)
    table = {label: (ti["state"], ti["try_number"]) for label, ti in result.tasks.items()}
    return result.run_state, table


def _check(actual: dict, expected: dict) -> None:
    """Compare label by label so a failure names the tasks that differ."""
    diff = {k: (actual.get(k), expected.get(k)) for k in actual.keys() | expected.keys()
            if actual.get(k) != expected.get(k)}
    assert not diff, f"(updraft, airflow) differ: {diff}"


# -- trigger rules ---------------------------------------------------------------------------------------------
# ``skip`` runs after ``bad`` (see the DAG file): all_success with both is otherwise decided by which finishes first.
# Sink ``<rule>__<mix>`` has upstreams s=success, f=failed, k=skipped, u=upstream_failed. Per rule, the outcome of
# each mix in the order of MIXES: "+" ran (success, try 1), "k" skipped (try 0), "u" upstream_failed (try 0).
MIXES = ["s", "f", "k", "u", "sf", "sk", "fk", "sfk"]
TRIGGER_RULES = {
    # any failed/upstream_failed upstream -> upstream_failed, before looking at skips
    "all_success":                 "+ukuukuu",
    # any success or skipped upstream -> skipped; upstream_failed counts as a failure
    "all_failed":                  "k+k+kkkk",
    "all_done":                    "++++++++",
    # skipped upstreams are not "done" for it -> skipped; all done with no success -> upstream_failed
    "all_done_min_one_success":    "+uku+kkk",
    # without setup tasks upstream it behaves as all_done
    "all_done_setup_success":      "++++++++",
    # all upstreams skipped -> skipped; done with no success -> upstream_failed
    "one_success":                 "+uku++u+",
    "one_failed":                  "k+k++k++",
    # only success or failed count as "done": upstream_failed alone -> skipped
    "one_done":                    "++kk++++",
    "none_failed":                 "+u+uu+uu",
    "none_failed_min_one_success": "+ukuu+uu",
    "none_skipped":                "++k++kkk",
    "all_skipped":                 "kk+kkkkk",
    "always":                      "++++++++",
}
OUTCOME = {"+": OK, "k": SKIP, "u": UF}


def test_trigger_rule_table_covers_every_rule():
    from airflow.sdk import TriggerRule

    assert set(TRIGGER_RULES) == {r.value for r in TriggerRule}


def test_trigger_rules():
    state, table = _run("trigger_rules")
    expected = {"ok": OK, "bad": FAIL, "skip": ("skipped", 1), "uf": UF}
    for rule, outcomes in TRIGGER_RULES.items():
        assert len(outcomes) == len(MIXES)
        expected.update({f"{rule}__{mix}": OUTCOME[o] for mix, o in zip(MIXES, outcomes, strict=True)})
    _check(table, expected)
    assert state == "failed"  # upstream_failed leaves


# -- branching -------------------------------------------------------------------------------------------------
def test_branching():
    state, table = _run("branching")
    _check(table, {
        # @task.branch: the branch not taken is skipped by the branch, its downstream by all_success
        "pick": OK, "left": OK, "right": SKIP, "after_right": SKIP,
        "join_nfmos": OK, "join_all_success": SKIP,
        # BranchPythonOperator after a task group, following "grp.one" and the join it reaches
        "prep.a": OK, "prep.b": OK, "op_branch": OK, "grp.one": OK, "grp.two": SKIP, "three": SKIP,
        "op_join": OK,  # none_failed_min_one_success, and followed directly
        # a task-group id stands for the group's roots; the non-root leaf is downstream of a followed task
        "to_group": OK, "tg.root": OK, "tg.leaf": OK, "other": SKIP,
        # None skips every direct downstream task (skip_all_except(None) -> empty set); all_done still runs
        "none_branch": OK, "n1": SKIP, "n2": SKIP, "n_done": OK,
        # inside a group, "path_a" resolves to "inner.path_a" (BranchMixIn._resolve_branch_id, relative ids)
        "inner.choose": OK, "inner.path_a": OK, "inner.path_b": SKIP,
    })
    assert state == "success"  # skipped leaves do not fail a run


# -- short-circuit ---------------------------------------------------------------------------------------------
def test_short_circuit():
    state, table = _run("short_circuit")
    _check(table, {
        # ignore_downstream_trigger_rules=True: get_flat_relatives(upstream=False) all skipped, all_done too.
        # (Not "always": Airflow's TriggerRuleDep passes an always task at once, so it may run before the
        # short-circuit task finishes; that race is Airflow's too and not a stable expectation.)
        "stop_all": OK, "all_direct": SKIP, "all_deep": SKIP, "all_done_deep": SKIP,
        # False: only downstream_list is skipped, the rest follow their trigger rules
        "stop_direct": OK, "direct": SKIP, "deep_all_success": SKIP, "deep_all_done": OK, "deep_none_failed": OK,
        "go_on": OK, "went_on": OK,
    })
    assert state == "success"


# -- mapping ---------------------------------------------------------------------------------------------------
def test_mapping():
    state, table = _run("mapping")
    _check(table, {
        "lit[0]": OK, "lit[1]": OK, "check_lit": OK,
        "numbers": OK, "over_xcom[0]": OK, "over_xcom[1]": OK, "over_xcom[2]": OK, "check_over_xcom": OK,
        "again[0]": OK, "again[1]": OK, "again[2]": OK, "check_again": OK,
        # cross product: the last argument varies fastest
        "pair[0]": OK, "pair[1]": OK, "pair[2]": OK, "pair[3]": OK, "check_cross": OK,
        "kwargs_list": OK, "by_kwargs[0]": OK, "by_kwargs[1]": OK, "check_by_kwargs": OK,
        # one map index fails; in skippy one skips by raising (it ran: try 1)
        "picky[0]": OK, "picky[1]": FAIL, "after_picky_all_done": OK, "after_picky_all_success": UF,
        "skippy[0]": OK, "skippy[1]": ("skipped", 1), "after_skippy_all_success": SKIP,
        "after_skippy_none_failed": OK,
        # an empty expansion leaves the unmapped instance skipped with no try (expand_mapped_task, length 0)
        "empty_lit": SKIP, "nothing": OK, "empty_xcom": SKIP, "after_empty_xcom": SKIP,
        "after_empty_all_success": SKIP, "after_empty_all_done": OK, "after_empty_none_failed": OK,
        "after_empty_none_failed_min_one_success": SKIP, "after_empty_one_success": SKIP,
        "after_empty_all_skipped": OK,
        # reducers get the XComs that exist: [] after the empty expansion, [1] after skippy (checked in the task)
        "reduce_empty": OK, "reduce_skippy": OK,
        # mapped over a failed / skipped upstream: the unexpanded instance (no map index) never runs
        "broken": FAIL, "over_failed": UF, "skipped_source": ("skipped", 1), "over_skipped": SKIP,
    })
    assert state == "failed"  # after_picky_all_success is an upstream_failed leaf


# -- retries ---------------------------------------------------------------------------------------------------
def test_retries():
    state, table = _run("retries")
    _check(table, {
        "flaky": ("success", 2), "check_flaky": OK,  # check_flaky fails unless flaky returned try_number 2
        "always_fails": ("failed", 3), "after_exhausted": UF,  # retries=2: three tries
        "fail_fast": FAIL,  # AirflowFailException: no retry despite retries=3
        "mapped_flaky[0]": OK, "mapped_flaky[1]": ("success", 2),  # each map index retries on its own
        "too_slow": ("failed", 2),  # execution_timeout (AirflowTaskTimeout) is retried like any failure
        "skips": ("skipped", 1),  # AirflowSkipException: skipped on the first try despite retries
    })
    assert state == "failed"


# -- run state ------------------------------------------------------------------------------------------------
def test_run_state_comes_from_the_leaves():
    # DagRun.update_state looks at the leaves only: a failed inner task with an all_done leaf that succeeds
    # gives a successful run.
    state, table = _run("run_state")
    _check(table, {"bad": FAIL, "cleanup": OK})
    assert state == "success"


# -- XComs and templates ---------------------------------------------------------------------------------------
XCOM_TABLE = {"push": OK, "pull": OK, "templated": OK, "params_and_conf": OK, "bash": OK, "check_bash": OK,
              "bash_pull": OK,  # fails (exit 1) unless xcom_pull / macros.ds_add / ds_nodash render as expected
              "bash_skip": ("skipped", 1),  # exit 99 -> AirflowSkipException, after the try started
              "bash_decorated": OK, "split": OK, "check_parts": OK}


def test_xcom_and_templates():
    state, table = _run("xcom_templating")
    _check(table, XCOM_TABLE)
    assert state == "success"


def test_conf_overrides_params():
    state, table = _run("xcom_templating_conf", conf={"x": 7})
    _check(table, XCOM_TABLE)
    assert state == "success"
