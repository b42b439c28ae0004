"""A run the scheduler cannot load or decide is set aside with a record; every other run still progresses."""

from __future__ import annotations

import dataclasses

from airflow.sdk import DAG, task
from tests.functional.scheduling.harness import START, Workers, store_dags
from updraft.model.states import DagRunState
from updraft.scheduling.commands.triggering import trigger_dag
from updraft.scheduling.commands.why import why_not_running
from updraft.scheduling.poison import NOTE_PREFIX


def _dag(dag_id):
    with DAG(dag_id, schedule=None, start_date=START) as dag:
        task(lambda: None, task_id="t")()
    return dag


def test_a_corrupt_run_among_healthy_ones_is_set_aside_and_they_finish(env):
    store, clock, scheduler, executor = env
    store_dags(store, _dag("first"), _dag("second"), now=clock())
    healthy = [trigger_dag(store, "first", now=clock()), trigger_dag(store, "second", now=clock())]
    # A run pinned to a DAG version that is not stored (a corrupt item, a version deleted by hand).
    corrupt = dataclasses.replace(healthy[0], run_id="manual__corrupt", dag_hash="no-such-version")
    assert store.create_run(corrupt)

    report = scheduler.run_pass()  # before containment: LookupError out of the pass, on every tick

    assert list(report.poisoned) == ["first/manual__corrupt"]
    assert "no stored version" in report.poisoned["first/manual__corrupt"]
    workers = Workers(store, scheduler, executor, clock)
    for run in healthy:
        assert workers.run_to_end(run.dag_id, run.run_id).state == DagRunState.SUCCESS
    # The record a user finds: the run's note (API, UI) and `tasks why`.
    kept = store.get_run("first", "manual__corrupt")
    assert kept.state == DagRunState.QUEUED and kept.note.startswith(NOTE_PREFIX)
    [reason] = why_not_running(store, "first", "manual__corrupt", "t")
    assert reason.dep == "Scheduler" and "no stored version" in reason.message


def test_a_users_note_is_never_overwritten_and_a_fixed_run_loses_the_scheduler_note(env):
    store, clock, scheduler, _ = env
    store_dags(store, _dag("first"), now=clock())
    good = trigger_dag(store, "first", now=clock())
    corrupt = dataclasses.replace(good, run_id="manual__mine", dag_hash="no-such-version", note="my words")
    assert store.create_run(corrupt)
    assert "first/manual__mine" in scheduler.run_pass().poisoned
    assert store.get_run("first", "manual__mine").note == "my words"

    # A scheduler note goes once the run can be decided again.
    assert store.set_run_note("first", good.run_id, NOTE_PREFIX + "LookupError: transient")
    scheduler.run_pass()
    assert store.get_run("first", good.run_id).note is None
