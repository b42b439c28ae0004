"""Against ``updraft local`` (the whole system on its embedded AWS), Airflow's official client does what a user
does day to day: list DAGs, unpause, trigger with conf, follow the run, read task states, a try's log, XComs, and
(with a pool and a variable made through the client) clear a failed task so that its second try runs (issue 13's
end-to-end test)."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator

import airflow_client.client as af
import pytest
from airflow_client.client.api.dag_api import DAGApi
from airflow_client.client.api.dag_run_api import DagRunApi
from airflow_client.client.api.pool_api import PoolApi
from airflow_client.client.api.task_instance_api import TaskInstanceApi
from airflow_client.client.api.variable_api import VariableApi
from airflow_client.client.api.x_com_api import XComApi
from airflow_client.client.models.clear_task_instances_body import ClearTaskInstancesBody
from airflow_client.client.models.clear_task_instances_body_task_ids_inner import ClearTaskInstancesBodyTaskIdsInner
from airflow_client.client.models.dag_patch_body import DAGPatchBody
from airflow_client.client.models.pool_body import PoolBody
from airflow_client.client.models.trigger_dag_run_post_body import TriggerDAGRunPostBody
from airflow_client.client.models.variable_body import VariableBody

from tests.functional.api.local_system_helpers import running_local_system, until
from updraft.local.system import LocalSystem

pytestmark = pytest.mark.slow

DAG_FILE = '''
from datetime import datetime
from airflow.sdk import Param, dag, task

@dag(schedule=None, start_date=datetime(2024, 1, 1), params={"n": Param(2, type="integer")})
def api_smoke():
    @task
    def produce(params=None):
        print("producing", params["n"])
        return list(range(params["n"]))

    @task
    def total(values):
        return sum(values)

    total(produce())

api_smoke()
'''

FLAKY_DAG_FILE = '''
from datetime import datetime
from airflow.sdk import Variable, dag, task

@dag(schedule=None, start_date=datetime(2024, 1, 1))
def flaky():
    @task(pool="wobbly_pool")
    def wobbly(ti=None):
        print("running try", ti.try_number, "with", Variable.get("wobble"))
        if ti.try_number == 1:
            raise ValueError("the first try always fails")
        return "steady"

    wobbly()

flaky()
'''


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSystem]:
    """One local system for the module (starting one costs seconds): each test uses its own DAG."""
    with running_local_system(tmp_path_factory.mktemp("local_mode"),
                              {"api_smoke.py": DAG_FILE, "flaky.py": FLAKY_DAG_FILE}, workers=2) as running:
        yield running


@pytest.fixture(scope="module")
def api(system: LocalSystem) -> Iterator[af.ApiClient]:
    """The official client, logged in as local mode's admin."""
    request = urllib.request.Request(f"{system.api.url}/auth/token", method="POST",
                                     headers={"Content-Type": "application/json"},
                                     data=json.dumps({"username": "admin", "password": "admin"}).encode())
    token = json.load(urllib.request.urlopen(request, timeout=30))["access_token"]
    with af.ApiClient(af.Configuration(host=system.api.url, access_token=token)) as client:
        yield client


def _finished(runs: DagRunApi, dag_id: str, run_id: str):
    """The run once it has finished (success or failed), waiting for the workers."""
    return until(lambda: (r := runs.get_dag_run(dag_id, run_id)).state.value in ("success", "failed") and r)


def test_the_official_client_runs_a_dag_end_to_end_against_local_mode(api):
    dags, runs, tis, xcoms = DAGApi(api), DagRunApi(api), TaskInstanceApi(api), XComApi(api)
    listed = until(lambda: [d for d in dags.get_dags().dags if d.dag_id == "api_smoke"])
    assert listed[0].is_paused is True  # new DAGs start paused, as in Airflow
    assert dags.patch_dag("api_smoke", DAGPatchBody(is_paused=False)).is_paused is False

    run = runs.trigger_dag_run("api_smoke", TriggerDAGRunPostBody(dag_run_id="by_the_client", conf={"n": 4}))
    assert run.state.value == "queued"
    final = _finished(runs, "api_smoke", "by_the_client")
    assert final.state.value == "success" and final.conf == {"n": 4}

    found = tis.get_task_instances("api_smoke", "by_the_client", order_by=["task_id"])
    assert [(t.task_id, t.state.value, t.try_number) for t in found.task_instances] == [
        ("produce", "success", 1), ("total", "success", 1)]
    log = tis.get_log("api_smoke", "by_the_client", "produce", 1, full_content=True)
    assert any("producing 4" in m.event for m in log.content.actual_instance)
    entry = xcoms.get_xcom_entry(dag_id="api_smoke", task_id="total", dag_run_id="by_the_client",
                                 xcom_key="return_value", deserialize=True)
    assert entry.actual_instance.value == 6


def test_a_failed_task_cleared_through_the_client_reruns_to_success(api):
    dags, runs, tis = DAGApi(api), DagRunApi(api), TaskInstanceApi(api)
    PoolApi(api).post_pool(PoolBody(name="wobbly_pool", slots=1))
    VariableApi(api).post_variable(VariableBody(key="wobble", value="a variable"))
    until(lambda: [d for d in dags.get_dags().dags if d.dag_id == "flaky"])
    dags.patch_dag("flaky", DAGPatchBody(is_paused=False))
    runs.trigger_dag_run("flaky", TriggerDAGRunPostBody(dag_run_id="wobbly_run"))
    assert _finished(runs, "flaky", "wobbly_run").state.value == "failed"
    first = tis.get_task_instance("flaky", "wobbly_run", "wobbly")
    assert (first.state.value, first.try_number, first.pool) == ("failed", 1, "wobbly_pool")

    cleared = tis.post_clear_task_instances("flaky", ClearTaskInstancesBody(
        dry_run=False, dag_run_id="wobbly_run", task_ids=[ClearTaskInstancesBodyTaskIdsInner("wobbly")], only_failed=True))
    assert [t.task_id for t in cleared.task_instances] == ["wobbly"]
    assert _finished(runs, "flaky", "wobbly_run").state.value == "success"

    again = tis.get_task_instance("flaky", "wobbly_run", "wobbly")
    assert (again.state.value, again.try_number) == ("success", 2)
    tries = tis.get_task_instance_tries("flaky", "wobbly_run", "wobbly")
    assert [(t.try_number, t.state and t.state.value) for t in tries.task_instances] == [
        (1, "failed"), (2, "success")]
    second_log = tis.get_log("flaky", "wobbly_run", "wobbly", 2, full_content=True)
    assert any("running try 2 with a variable" in m.event for m in second_log.content.actual_instance)
    first_log = tis.get_log("flaky", "wobbly_run", "wobbly", 1, full_content=True)
    assert any("the first try always fails" in m.event for m in first_log.content.actual_instance)
