"""Clearing across DAGs through ``POST /dags/{dag_id}/clearTaskInstances``: an ExternalTaskMarker the clear takes
brings its external task and that task's downstream tasks into the clear, marker after marker, as Airflow's
``DAG.clear`` with dependent DAGs does (Airflow 2's; Airflow 3.3's clear no longer follows them); a chain deeper
than the first marker's ``recursion_depth`` is a 400."""

from __future__ import annotations

import datetime as dt

import pytest

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.providers.standard.sensors.external_task import ExternalTaskMarker
from airflow.sdk import DAG
from tests.functional.api.conftest import NOW, START
from updraft.model.parse_results import ParsedFile
from updraft.model.records import DagRun, TIKey
from updraft.model.states import DagRunState, TaskInstanceState
from updraft.scheduling.commands.dag_registration import register_parsed_file
from updraft.serialization import serialize_dag

DAY = dt.datetime(2024, 2, 10, tzinfo=dt.UTC)


def _dags() -> list[DAG]:
    with DAG("parent", schedule=None, start_date=START) as parent:
        EmptyOperator(task_id="start") >> ExternalTaskMarker(
            task_id="mark", external_dag_id="child", external_task_id="child_task")
    with DAG("child", schedule=None, start_date=START) as child:
        (EmptyOperator(task_id="before") >> EmptyOperator(task_id="child_task")
         >> ExternalTaskMarker(task_id="mark_grandchild", external_dag_id="grandchild", external_task_id="leaf",
                               logical_date="{{ ds }}T00:00:00+00:00")
         >> EmptyOperator(task_id="after"))
    with DAG("grandchild", schedule=None, start_date=START) as grandchild:
        EmptyOperator(task_id="leaf")
        EmptyOperator(task_id="untouched")
    with DAG("loop_a", schedule=None, start_date=START) as loop_a:  # a cycle: each marker is followed once
        ExternalTaskMarker(task_id="mark", external_dag_id="loop_b", external_task_id="mark")
    with DAG("loop_b", schedule=None, start_date=START) as loop_b:
        ExternalTaskMarker(task_id="mark", external_dag_id="loop_a", external_task_id="mark")
    chain = []
    for i in range(5):  # chain_0 -> chain_1 -> ... deeper than chain_0's recursion_depth
        with DAG(f"chain_{i}", schedule=None, start_date=START) as link:
            ExternalTaskMarker(task_id="mark", external_dag_id=f"chain_{i + 1}", external_task_id="mark",
                               recursion_depth=3 if i == 0 else 10)
        chain.append(link)
    return [parent, child, grandchild, loop_a, loop_b, *chain]


@pytest.fixture
def finished(store):
    """Every DAG stored with one successful run at DAY, each task succeeded in try 1."""
    for dag in _dags():
        doc = serialize_dag(dag, relative_fileloc=f"{dag.dag_id}.py", file_hash="h")
        register_parsed_file(store, ParsedFile(relative_path=f"{dag.dag_id}.py", file_hash="h", dags=[doc]), now=NOW)
        meta = store.get_dag_meta(dag.dag_id)
        store.create_run(DagRun(dag_id=dag.dag_id, run_id="r", run_type="manual", dag_hash=meta.dag_hash,
                                state=DagRunState.SUCCESS, logical_date=DAY, data_interval_start=DAY,
                                data_interval_end=DAY, run_after=DAY, queued_at=DAY))
        for task_id in dag.task_dict:
            store.create_ti(TIKey(dag.dag_id, "r", task_id, -1), state=TaskInstanceState.SUCCESS,
                            fields={"try_number": 1})
    return store


def _clear(api, dag_id: str, **body):
    return api("POST", f"/api/v2/dags/{dag_id}/clearTaskInstances",
               body={"dag_run_id": "r", "only_failed": False, **body})


def _taken(answer) -> list[tuple[str, str]]:
    return sorted((ti["dag_id"], ti["task_id"]) for ti in answer.body["task_instances"])


EXPECTED = [("child", "after"), ("child", "child_task"), ("child", "mark_grandchild"), ("grandchild", "leaf"),
            ("parent", "mark"), ("parent", "start")]


@pytest.mark.slow
def test_a_cleared_marker_clears_the_external_task_and_its_downstream_recursively(api, finished):
    dry = _clear(api, "parent", task_ids=["start"], include_downstream=True)
    assert dry.status == 200, dry.body
    assert _taken(dry) == EXPECTED
    assert all(ti["state"] == "success" for ti in dry.body["task_instances"])  # a dry run changes nothing
    # A marker the clear does not take is not followed; the external instances are filtered as the clear's own.
    assert _taken(_clear(api, "parent", task_ids=["start"])) == [("parent", "start")]
    assert _taken(_clear(api, "parent", task_ids=["start"], include_downstream=True, only_failed=True)) == []
    done = _clear(api, "parent", task_ids=["start"], include_downstream=True, dry_run=False)
    assert done.status == 200, done.body
    assert _taken(done) == EXPECTED
    for dag_id, task_id in EXPECTED:
        assert finished.get_ti(TIKey(dag_id, "r", task_id, -1)).state is None
    for dag_id, task_id in [("child", "before"), ("grandchild", "untouched")]:
        assert finished.get_ti(TIKey(dag_id, "r", task_id, -1)).state == TaskInstanceState.SUCCESS
    for dag_id in ("parent", "child", "grandchild"):
        assert finished.get_run(dag_id, "r").state == DagRunState.QUEUED


@pytest.mark.slow
def test_a_cycle_of_markers_takes_each_once_and_a_deep_chain_stops_at_the_recursion_depth(api, finished):
    assert _taken(_clear(api, "loop_a", task_ids=["mark"])) == [("loop_a", "mark"), ("loop_b", "mark")]
    answer = _clear(api, "chain_0", task_ids=["mark"])
    assert answer.status == 400
    assert answer.body["detail"] == ("Maximum recursion depth 3 reached for ExternalTaskMarker mark. Attempted to "
                                     "clear too many tasks or there may be a cyclic dependency.")
