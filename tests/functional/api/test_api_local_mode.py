"""Against ``updraft local`` (the whole system on its embedded AWS), Airflow's official client does what a user
does day to day: list DAGs, unpause, trigger with conf, follow the run, read task states, a try's log, XComs."""

from __future__ import annotations

import json
import textwrap
import time
import urllib.request
from pathlib import Path

import airflow_client.client as af
import pytest
from airflow_client.client.api.dag_api import DAGApi
from airflow_client.client.api.dag_run_api import DagRunApi
from airflow_client.client.api.task_instance_api import TaskInstanceApi
from airflow_client.client.api.x_com_api import XComApi
from airflow_client.client.models.dag_patch_body import DAGPatchBody
from airflow_client.client.models.trigger_dag_run_post_body import TriggerDAGRunPostBody

from updraft.local.system import LocalOptions, LocalSystem

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


def _until(predicate, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        assert time.monotonic() < deadline, f"not true after {timeout} s"
        time.sleep(0.2)
    return value


@pytest.fixture
def system(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("UPDRAFT_HOME", str(tmp_path / "home"))
    dags = tmp_path / "dags"
    dags.mkdir()
    (dags / "api_smoke.py").write_text(textwrap.dedent(DAG_FILE))
    running = LocalSystem(LocalOptions(dags_folder=str(dags), tick_seconds=0.5, workers=2, sync_seconds=0.2,
                                       grace_seconds=0.0), say=lambda line: None).start()
    try:
        yield running
    finally:
        running.stop()


def test_the_official_client_runs_a_dag_end_to_end_against_local_mode(system):
    request = urllib.request.Request(f"{system.api.url}/auth/token", method="POST",
                                     headers={"Content-Type": "application/json"},
                                     data=json.dumps({"username": "admin", "password": "admin"}).encode())
    token = json.load(urllib.request.urlopen(request, timeout=30))["access_token"]
    with af.ApiClient(af.Configuration(host=system.api.url, access_token=token)) as api:
        dags, runs, tis, xcoms = DAGApi(api), DagRunApi(api), TaskInstanceApi(api), XComApi(api)
        listed = _until(lambda: [d for d in dags.get_dags().dags if d.dag_id == "api_smoke"])
        assert listed[0].is_paused is True  # new DAGs start paused, as in Airflow
        assert dags.patch_dag("api_smoke", DAGPatchBody(is_paused=False)).is_paused is False

        run = runs.trigger_dag_run("api_smoke", TriggerDAGRunPostBody(dag_run_id="by_the_client", conf={"n": 4}))
        assert run.state.value == "queued"
        final = _until(lambda: (r := runs.get_dag_run("api_smoke", "by_the_client")).state.value
                       in ("success", "failed") and r)
        assert final.state.value == "success" and final.conf == {"n": 4}

        found = tis.get_task_instances("api_smoke", "by_the_client", order_by=["task_id"])
        assert [(t.task_id, t.state.value, t.try_number) for t in found.task_instances] == [
            ("produce", "success", 1), ("total", "success", 1)]
        log = tis.get_log("api_smoke", "by_the_client", "produce", 1, full_content=True)
        assert any("producing 4" in m.event for m in log.content.actual_instance)
        entry = xcoms.get_xcom_entry(dag_id="api_smoke", task_id="total", dag_run_id="by_the_client",
                                     xcom_key="return_value", deserialize=True)
        assert entry.actual_instance.value == 6
