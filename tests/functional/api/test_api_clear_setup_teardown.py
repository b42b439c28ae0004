"""``clearTaskInstances`` on a DAG with setup and teardown tasks, on moto: clearing a work task with its
downstream also clears the setup that encloses it and that setup's teardown, as Airflow's REST clear does
(``partial_subset``), so the rerun has its resource set up again and released after it."""

from __future__ import annotations

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG
from tests.functional.api.conftest import NOW, START
from updraft.model.parse_results import ParsedFile
from updraft.model.records import TIKey
from updraft.model.states import DagRunState, TaskInstanceState
from updraft.scheduling.dag_registration import register_parsed_file
from updraft.serialization import serialize_dag

S = TaskInstanceState


def _register(store) -> None:
    with DAG("resources", schedule=None, start_date=START) as dag:
        create = EmptyOperator(task_id="create").as_setup()
        create >> EmptyOperator(task_id="work") >> EmptyOperator(task_id="delete").as_teardown(setups=create)
        EmptyOperator(task_id="unrelated")
    doc = serialize_dag(dag, relative_fileloc="resources.py", file_hash="r")
    register_parsed_file(store, ParsedFile(relative_path="resources.py", file_hash="r", dags=[doc]), now=NOW)


def test_clearing_a_work_task_clears_its_setup_and_teardown(api, store):
    _register(store)
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
