"""Issue 17's authoring features through the API, on moto: ``clearTaskInstances`` of a work task with its
downstream also clears the setup that encloses it and that setup's teardown, as Airflow's REST clear does
(``partial_subset``), so the rerun has its resource set up again and released after it; and a task of a mapped
task group is not ``is_mapped`` in the tasks route (it is no mapped operator), as in Airflow."""

from __future__ import annotations

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG
from tests.functional.api.conftest import NOW, START
from tests.mapped_group_dags import one_task_group
from updraft.model.parse_results import ParsedFile
from updraft.model.records import TIKey
from updraft.model.states import DagRunState, TaskInstanceState
from updraft.scheduling.commands.dag_registration import register_parsed_file
from updraft.serialization import serialize_dag

S = TaskInstanceState


def _register(store, dag) -> None:
    doc = serialize_dag(dag, relative_fileloc=f"{dag.dag_id}.py", file_hash="r")
    register_parsed_file(store, ParsedFile(relative_path=f"{dag.dag_id}.py", file_hash="r", dags=[doc]), now=NOW)


def test_clearing_a_work_task_clears_its_setup_and_teardown(api, store):
    with DAG("resources", schedule=None, start_date=START) as dag:
        create = EmptyOperator(task_id="create").as_setup()
        create >> EmptyOperator(task_id="work") >> EmptyOperator(task_id="delete").as_teardown(setups=create)
        EmptyOperator(task_id="unrelated")
    _register(store, dag)
    assert api("POST", "/api/v2/dags/resources/dagRuns", body={"dag_run_id": "r1", "logical_date": None}).status == 200
    store.set_run_state("resources", "r1", expected=[DagRunState.QUEUED], state=DagRunState.RUNNING, now=NOW)
    for task_id, state in (("create", S.SUCCESS), ("work", S.FAILED), ("delete", S.SUCCESS),
                           ("unrelated", S.SUCCESS)):
        store.transition_ti(TIKey("resources", "r1", task_id), expected=[None], state=state,
                            fields={"try_number": 1, "try_id": f"try-{task_id}", "start_date": NOW, "end_date": NOW})
    url = "/api/v2/dags/resources/clearTaskInstances"
    only = api("POST", url, body={"task_ids": ["work"], "dag_run_id": "r1"})
    assert [t["task_id"] for t in only.body["task_instances"]] == ["work"]  # no direction: the task alone

    cleared = api("POST", url, body={"task_ids": ["work"], "dag_run_id": "r1", "include_downstream": True,
                                     "only_failed": False, "dry_run": False})
    assert cleared.status == 200, cleared.body
    assert sorted(t["task_id"] for t in cleared.body["task_instances"]) == ["create", "delete", "work"]
    states = {ti.task_id: ti.state for ti in store.get_run_tis("resources", "r1")}
    assert states == {"create": None, "work": None, "delete": None, "unrelated": S.SUCCESS}


def test_a_task_of_a_mapped_group_is_not_a_mapped_operator(api, store):
    _register(store, one_task_group("grouped", [1, 2], start_date=START, one_mapped_over=[3]))
    tasks = api.get("/api/v2/dags/grouped/tasks").body["tasks"]
    assert {t["task_id"]: t["is_mapped"] for t in tasks} == {"group.one": False, "one": True}
