"""A virtualenv or external-Python task's interpreter inherits the task child's environment, never the worker's
(issue 17 on top of issue 18's isolation): with a DAG-code role configured, the role's credentials are all the
other interpreter finds, in its environment and in its parent's (the credential-less task child)."""

from __future__ import annotations

import json

import boto3
from moto import mock_aws

from tests.functional.runtime.rt_harness import RuntimeEnv
from updraft.runtime.dag_code_credentials import DagCodeCredentials
from updraft.runtime.worker import handle_dispatch

WORKER_KEY, WORKER_SECRET = "AKIAWORKERWORKER0002", "worker-secret-never-for-a-venv"

LOOKER = """
import sys
from airflow.providers.standard.operators.python import ExternalPythonOperator

def look():
    import os
    with open(f"/proc/{os.getppid()}/environ", "rb") as f:
        parent = f.read().decode(errors="replace")
    return {"env": {k: v for k, v in os.environ.items() if k.startswith(("AWS_", "UPDRAFT_"))},
            "parent_environ": parent}

with DAG("venv_looker", schedule=None, start_date=START):
    ExternalPythonOperator(task_id="look", python=sys.executable, python_callable=look, expect_airflow=False)
"""


def test_the_other_interpreter_holds_the_dag_code_roles_credentials_only(tmp_path, monkeypatch):
    monkeypatch.setenv("UPDRAFT_TABLE", "the-worker-table")
    with mock_aws():
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", WORKER_KEY)
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", WORKER_SECRET)
        env = RuntimeEnv(tmp_path)
        env.add("venv_looker", LOOKER)
        iam = boto3.client("iam", region_name="us-east-1")
        trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"},
                                                         "Action": ["sts:AssumeRole", "sts:TagSession"]}]}
        role = iam.create_role(RoleName="dag-code", AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"]
        credentials = DagCodeCredentials(lambda: boto3.client("sts", region_name="us-east-1"), role)
        run = env.trigger("venv_looker")
        for _ in range(3):
            env.scheduler.run_pass()
            for item in env.executor.take():
                handle_dispatch(item, store=env.store, loader=env.loader, scheduler=env.scheduler,
                                now_fn=env.clock, log_sink=env.logs, credentials=credentials)
        assert env.states("venv_looker", run.run_id) == {"look": "success"}, env.log("venv_looker", run.run_id,
                                                                                      "look")
        found = env.xcom("venv_looker", run.run_id, "look")
    role_env = credentials.environment()
    assert {k: v for k, v in found["env"].items() if k.startswith("AWS_") and k in role_env} == role_env
    assert role_env["AWS_ACCESS_KEY_ID"] != WORKER_KEY
    for text in (json.dumps(found["env"]), found["parent_environ"]):
        assert WORKER_KEY not in text and WORKER_SECRET not in text and "the-worker-table" not in text
    assert not any(k.startswith("UPDRAFT_") for k in found["env"])
