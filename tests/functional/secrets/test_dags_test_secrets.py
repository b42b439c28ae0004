"""`updraft dags test` with a DAG that uses Variable.get/set, {{ var.value }}, {{ conn.x.password }} and
BaseHook.get_connection: it succeeds, and the task logs it writes show the secrets only as ***."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from updraft.cli.app import cli
from updraft.runtime.secrets import forget_secrets_setup
from updraft.sdk import connection, variable
from updraft.secrets.masker import reset_masker

pytestmark = pytest.mark.slow

DAG_FILE = '''
import datetime
from airflow.sdk import DAG, BaseHook, Variable, task
from airflow.providers.standard.operators.bash import BashOperator

with DAG("secrets_test", schedule=None, start_date=datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)):
    @task
    def read():
        Variable.set("run_secret", "written-secret-value")
        conn = BaseHook.get_connection("svc")
        print("using", conn.login, conn.password, Variable.get("run_secret"))
        return Variable.get("region")

    read()
    BashOperator(
        task_id="templated", bash_command="echo {{ var.value.region }} {{ conn.svc.password }} {{ conn.svc.host }}")
'''


def test_dags_test_runs_a_dag_with_variables_and_connections(tmp_path, monkeypatch, fast_dags_test_ticks):
    (tmp_path / "dags").mkdir()
    (tmp_path / "dags" / "secrets_test.py").write_text(DAG_FILE)
    monkeypatch.setenv("AIRFLOW_VAR_REGION", "eu-west-1")
    monkeypatch.setenv("AIRFLOW_CONN_SVC", json.dumps({"conn_type": "http", "host": "svc.example.com",
                                                       "login": "bot", "password": "svc-password-1"}))
    forget_secrets_setup()
    try:
        result = CliRunner().invoke(cli, ["dags", "test", "secrets_test", "-o", "json", "--dags-folder",
                                          str(tmp_path / "dags"), "--log-folder", str(tmp_path / "logs")],
                                    catch_exceptions=False)
    finally:
        variable.reset_backends()
        connection.reset_backends()
        forget_secrets_setup()
        reset_masker()
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert {task: row["state"] for task, row in doc["tasks"].items()} == {
        "read": "success", "templated": "success"}
    logs = {path.parts[-3]: path.read_text() for path in (tmp_path / "logs").rglob("*.log")}
    assert "using bot *** ***" in logs["read"]
    assert "eu-west-1 *** svc.example.com" in logs["templated"]
    assert not any("svc-password-1" in text or "written-secret-value" in text for text in logs.values())
