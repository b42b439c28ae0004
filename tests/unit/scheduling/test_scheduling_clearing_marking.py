"""The pure decisions behind a user's clear and mark: which instances, which new states, which fields."""

from __future__ import annotations

import dataclasses
import datetime as dt

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG
from tests.unit.scheduling.helpers import NOW, START, make_run, make_ti, serialized
from updraft.model.states import DagRunState, TaskInstanceState
from updraft.scheduling.decisions.clearing import (
    Selection,
    as_recorded,
    relatives,
    reset_of,
    resets,
    run_state_after_clear,
    to_clear,
    with_relatives,
)
from updraft.scheduling.decisions.marking import marked_selection, run_mark, runs_in_range, task_marks

S = TaskInstanceState


def _diamond():
    """a >> [b, c] >> d, and e alone; c has 3 retries."""
    with DAG("d", schedule=None, start_date=START) as dag:
        a, b, c, d = (EmptyOperator(task_id=t, retries=3 if t == "c" else 0) for t in "abcd")
        EmptyOperator(task_id="e")
        a >> [b, c] >> d
    return serialized(dag)


def test_relatives_are_transitive_and_a_selection_grows_by_them():
    dag = _diamond()
    assert relatives(dag, ["b"], upstream=False) == {"d"} and relatives(dag, ["d"], upstream=True) == {"a", "b", "c"}
    grown = with_relatives(dag, Selection(frozenset({"b"})), upstream=True, downstream=True)
    assert grown.task_ids == {"a", "b", "d"}
    assert with_relatives(dag, Selection(), upstream=True, downstream=True).task_ids is None  # everything already


def test_to_clear_filters_as_airflows_dag_clear():
    run = make_run()
    tis = [make_ti(run, "a", S.SUCCESS), make_ti(run, "b", S.FAILED), make_ti(run, "c", S.UPSTREAM_FAILED),
           make_ti(run, "d", S.RUNNING), make_ti(run, "m", S.FAILED, map_index=1),
           make_ti(run, "m", S.SUCCESS, map_index=0)]
    assert [t.task_id for t in to_clear(tis, Selection())] == ["a", "b", "c", "d", "m", "m"]
    assert [t.task_id for t in to_clear(tis, Selection(), only_failed=True)] == ["b", "c", "m"]
    assert [t.task_id for t in to_clear(tis, Selection(), only_running=True)] == ["d"]
    one_index = Selection(frozenset(), frozenset({("m", 1)}))
    assert [(t.task_id, t.map_index) for t in to_clear(tis, one_index)] == [("m", 1)]


def test_a_reset_extends_max_tries_removes_what_the_try_held_and_skips_untouched_instances():
    dag, run = _diamond(), make_run()
    failed = make_ti(run, "c", S.FAILED, try_number=4, try_id="t4")
    reset = reset_of(failed, dag.task_dict["c"], note="again")
    assert reset.fields["max_tries"] == 4 + 3 and reset.fields["lease_expires_at"] is None
    assert reset.fields["note"] == "again" and reset.ti is failed
    gone = reset_of(dataclasses.replace(failed, max_tries=9), None)
    assert gone.fields["max_tries"] == 9  # a task no longer in the DAG: max(max_tries, try_number)
    untouched = make_ti(run, "e", None)
    assert [r.key.task_id for r in resets(dag, [failed, untouched])] == ["c"]


def test_a_recorded_try_keeps_a_finished_state_and_records_any_other_as_failed():
    run = make_run()
    assert as_recorded(make_ti(run, "a", S.SUCCESS)).state == S.SUCCESS
    assert as_recorded(make_ti(run, "a", S.RUNNING)).state == S.FAILED
    assert as_recorded(make_ti(run, "a", S.SCHEDULED)).state == S.FAILED  # a retry's claim records the try


def test_only_a_finished_run_is_requeued_by_a_clear():
    assert run_state_after_clear(DagRunState.FAILED) == DagRunState.QUEUED
    assert run_state_after_clear(DagRunState.RUNNING) is None
    assert run_state_after_clear(DagRunState.SUCCESS, reset_dag_runs=False) is None


def test_a_run_mark_gives_running_tries_its_state_and_skips_the_unfinished_rest():
    dag, run = _diamond(), make_run()
    tis = [make_ti(run, "a", S.SUCCESS), make_ti(run, "b", S.RUNNING, try_id="tb"),
           make_ti(run, "c", S.UP_FOR_RETRY), make_ti(run, "d", None), make_ti(run, "e", S.QUEUED, try_id="te")]
    changes = {c.key.task_id: c for c in run_mark(dag, tis, DagRunState.SUCCESS, now=NOW)}
    assert {t: c.state for t, c in changes.items()} == {"b": S.SUCCESS, "c": S.SKIPPED, "d": S.SKIPPED,
                                                        "e": S.SKIPPED}
    assert changes["b"].expected_try_id == "tb" and changes["b"].fields["lease_expires_at"] is None
    assert changes["e"].fields["lease_expires_at"] is None and changes["d"].expected is None


def test_a_task_mark_names_the_task_its_relatives_and_leaves_instances_already_in_the_state():
    dag, run = _diamond(), make_run()
    selection = marked_selection(dag, "b", None, upstream=True, downstream=False)
    tis = [make_ti(run, "a", S.SUCCESS), make_ti(run, "b", S.FAILED), make_ti(run, "d", S.UPSTREAM_FAILED)]
    assert [c.key.task_id for c in task_marks(tis, selection, S.SUCCESS, now=NOW)] == ["b"]
    one = marked_selection(dag, "m", 2, upstream=False, downstream=False)
    assert one.matches(make_ti(run, "m", None, map_index=2)) and not one.matches(make_ti(run, "m", None, 1))


def test_runs_in_range_by_logical_date():
    day = dt.timedelta(days=1)
    runs = [make_run(run_id=f"r{i}", logical_date=START + i * day) for i in range(3)]
    manual = make_run(run_id="m", logical_date=None)
    assert [r.run_id for r in runs_in_range(runs, runs[1], past=True, future=False)] == ["r0", "r1"]
    assert [r.run_id for r in runs_in_range(runs, runs[1], past=False, future=True)] == ["r1", "r2"]
    assert [r.run_id for r in runs_in_range([*runs, manual], manual, past=True, future=True)] == ["m"]
