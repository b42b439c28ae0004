"""The worker Lambda handler, invoked with the sample dispatch against moto (DynamoDB, S3, Lambda)."""

from __future__ import annotations

import datetime as dt
import json
import tempfile
from pathlib import Path
from types import SimpleNamespace

import boto3
import pytest
from moto import mock_aws

from tests.functional.lambda_helpers import SpyLambda, echo_function_zip, lambda_context
from tests.functional.scheduling.harness import store_dags
from updraft.executors.recording import RecordingExecutor
from updraft.model.records import TIKey
from updraft.model.states import TaskInstanceState
from updraft.runtime.loader import LocalDagLoader
from updraft.scheduling.scheduler import Scheduler
from updraft.scheduling.triggering import trigger_dag
from updraft.store.config import StoreConfig
from updraft.store.dynamo import DynamoStore
from updraft.store.tables import create_table

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = json.loads((ROOT / "events" / "worker" / "dispatch.json").read_text())
TABLE = "updraft-worker-test"
BUCKET = "updraft-dev-data"
WORKER = "updraft-worker"
REGION = "us-east-1"

DAG_FILE = '''
import datetime
from airflow.sdk import DAG
from airflow.providers.standard.operators.bash import BashOperator

with DAG("handler_chain", schedule=None, start_date=datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)):
    BashOperator(task_id="first", bash_command="echo hello from first") >> BashOperator(
        task_id="second", bash_command="echo 2")
'''






@pytest.fixture
def env(tmp_path, monkeypatch):
    for name, value in {"AWS_REGION": REGION, "UPDRAFT_TABLE": TABLE, "UPDRAFT_BUCKET": BUCKET,
                        "UPDRAFT_WORKER_FUNCTION": WORKER}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the worker mirrors the DAGs under /tmp
    with mock_aws(config={"lambda": {"use_docker": False}}):
        config = StoreConfig(table_name=TABLE, region=REGION, s3_bucket=BUCKET)
        create_table(config)
        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket=BUCKET)
        s3.put_object(Bucket=BUCKET, Key="dags/handler_chain.py", Body=DAG_FILE.encode())
        role = boto3.client("iam", region_name=REGION).create_role(
            RoleName="worker", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
        lam = boto3.client("lambda", region_name=REGION)
        lam.create_function(FunctionName=WORKER, Runtime="python3.12", Role=role, Handler="handler.handler",
                            Code={"ZipFile": echo_function_zip()})

        # What the parser would have stored for the file, and a triggered run whose first task is claimed.
        store = DynamoStore(config, s3_client=s3)
        local = tmp_path / "parsed"
        local.mkdir()
        (local / "handler_chain.py").write_text(DAG_FILE)
        now = dt.datetime.now(dt.UTC)
        store_dags(store, LocalDagLoader(local).load_file("handler_chain.py")["handler_chain"], now=now)
        trigger_dag(store, "handler_chain", now=now, run_id=SAMPLE["run_id"])
        recording = RecordingExecutor()
        Scheduler(store, recording).schedule_run("handler_chain", SAMPLE["run_id"])
        (dispatch,) = recording.take()

        from functions.worker import handler

        monkeypatch.setattr("updraft.services._shared", None)  # built from the environment above on first use
        spy = SpyLambda(lam)
        handler.services()._clients["lambda"] = spy
        yield SimpleNamespace(handler=handler, store=store, s3=s3, dispatch=dispatch, invokes=spy.payloads)


def test_dispatch_runs_the_try_logs_it_and_starts_the_next_task(env):
    event = {**SAMPLE, "try_id": env.dispatch.try_id}  # the sample, with the fencing token of the real claim
    assert event == env.dispatch.to_payload()

    result = env.handler.handler(event, lambda_context(WORKER))

    assert result == {"status": "ran", "task": "first", "try_number": 1, "state": "success"}
    key = TIKey("handler_chain", SAMPLE["run_id"], "first")
    assert env.store.get_ti(key).state == TaskInstanceState.SUCCESS
    log = env.s3.get_object(Bucket=BUCKET, Key=f"logs/handler_chain/{SAMPLE['run_id']}/first/-1/1.log")
    assert "hello from first" in log["Body"].read().decode()
    (downstream,) = env.invokes  # the mini scheduler dispatched "second" through the worker Lambda
    assert downstream["task_id"] == "second"
    second = env.store.get_ti(TIKey("handler_chain", SAMPLE["run_id"], "second"))
    assert second.state == TaskInstanceState.QUEUED and second.try_id == downstream["try_id"]

    # Lambda delivered the same event again: the fence refuses it and nothing changes.
    before = env.store.get_run_tis("handler_chain", SAMPLE["run_id"])
    again = env.handler.handler(event, lambda_context(WORKER))
    assert again == {"status": "not_runnable", "task": "first", "try_number": 1}
    assert env.store.get_run_tis("handler_chain", SAMPLE["run_id"]) == before
    assert len(env.invokes) == 1


def test_a_superseded_try_is_not_run(env):
    result = env.handler.handler(SAMPLE, lambda_context(WORKER))  # the sample's own try_id is not the claimed one
    assert result["status"] == "not_runnable"
    assert env.store.get_ti(TIKey("handler_chain", SAMPLE["run_id"], "first")).state == TaskInstanceState.QUEUED


@pytest.mark.parametrize("event", [{}, {"Records": []}, {**SAMPLE, "try_number": "one"}, "first", None])
def test_malformed_payload_is_rejected_without_raising(env, event, caplog):
    result = env.handler.handler(event, lambda_context(WORKER))
    assert result["status"] == "rejected" and result["error"].startswith("not a worker dispatch")
    assert "rejected a malformed dispatch" in caplog.text
    assert env.store.get_ti(TIKey("handler_chain", SAMPLE["run_id"], "first")).state == TaskInstanceState.QUEUED


def test_fargate_entrypoint_reads_the_dispatch_from_the_environment(env, monkeypatch, capsys):
    monkeypatch.setenv("UPDRAFT_DISPATCH", json.dumps(env.dispatch.to_payload()))
    assert env.handler.main() == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["state"] == "success"
    monkeypatch.setenv("UPDRAFT_DISPATCH", "not json")
    assert env.handler.main() == 2
