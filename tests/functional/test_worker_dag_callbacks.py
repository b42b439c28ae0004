"""End to end through the worker Lambda handler on moto: a failing try emails its alert through SES, the run's end
sends the DAG's failure callback to the worker Lambda, and the callback (which emails too) runs there once."""

from __future__ import annotations

import datetime as dt
import tempfile
from types import SimpleNamespace

import boto3
import pytest
from moto import mock_aws
from moto.core import DEFAULT_ACCOUNT_ID
from moto.ses.models import ses_backends

from tests.functional.lambda_helpers import SpyLambda, echo_function_zip, lambda_context
from tests.functional.scheduling.harness import store_dags
from updraft.executors.recording import RecordingExecutor
from updraft.model.records import TIKey
from updraft.runtime.loader import LocalDagLoader
from updraft.scheduling.scheduler import Scheduler
from updraft.scheduling.triggering import trigger_dag
from updraft.store.config import StoreConfig
from updraft.store.dynamo import DynamoStore
from updraft.store.tables import create_table

TABLE = "updraft-worker-callbacks-test"
BUCKET = "updraft-dev-data"
WORKER = "updraft-worker"
REGION = "us-east-1"
SENDER = "updraft@example.com"
RUN_ID = "manual__2026-11-24T12:00:00+00:00"

DAG_FILE = '''
import datetime
from airflow.sdk import DAG
from airflow.providers.standard.operators.python import PythonOperator
from airflow.utils.email import send_email

def page_oncall(context):
    send_email(to="oncall@example.com", subject=f"{context['dag'].dag_id} failed: {context['reason']}",
               html_content=f"run {context['run_id']}, task {context['ti'].task_id}")

def explode():
    raise ValueError("boom")

with DAG("handler_cb", schedule=None, start_date=datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc),
         on_failure_callback=page_oncall):
    PythonOperator(task_id="only", python_callable=explode, email=["ops@example.com"])
'''


@pytest.fixture
def env(tmp_path, monkeypatch):
    for name, value in {"AWS_REGION": REGION, "UPDRAFT_TABLE": TABLE, "UPDRAFT_BUCKET": BUCKET,
                        "UPDRAFT_WORKER_FUNCTION": WORKER, "UPDRAFT_EMAIL_FROM": SENDER}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the worker mirrors the DAGs under /tmp
    with mock_aws(config={"lambda": {"use_docker": False}}):
        config = StoreConfig(table_name=TABLE, region=REGION, s3_bucket=BUCKET)
        create_table(config)
        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket=BUCKET)
        s3.put_object(Bucket=BUCKET, Key="dags/handler_cb.py", Body=DAG_FILE.encode())
        boto3.client("ses", region_name=REGION).verify_email_identity(EmailAddress=SENDER)
        role = boto3.client("iam", region_name=REGION).create_role(
            RoleName="worker", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
        lam = boto3.client("lambda", region_name=REGION)
        lam.create_function(FunctionName=WORKER, Runtime="python3.12", Role=role, Handler="handler.handler",
                            Code={"ZipFile": echo_function_zip()})
        store = DynamoStore(config, s3_client=s3)
        local = tmp_path / "parsed"
        local.mkdir()
        (local / "handler_cb.py").write_text(DAG_FILE)
        now = dt.datetime.now(dt.UTC)
        store_dags(store, LocalDagLoader(local).load_file("handler_cb.py")["handler_cb"], now=now)
        trigger_dag(store, "handler_cb", now=now, run_id=RUN_ID)
        recording = RecordingExecutor()
        Scheduler(store, recording).schedule_run("handler_cb", RUN_ID)
        (dispatch,) = recording.take()

        from functions.worker import handler

        monkeypatch.setattr("updraft.services._shared", None)
        spy = SpyLambda(lam)
        handler.services()._clients["lambda"] = spy
        yield SimpleNamespace(handler=handler, store=store, s3=s3, dispatch=dispatch, invokes=spy.payloads,
                              ses=ses_backends[DEFAULT_ACCOUNT_ID][REGION])


def test_failure_callback_and_failure_email_reach_ses_through_the_worker(env):
    result = env.handler.handler(env.dispatch.to_payload(), lambda_context(WORKER))
    assert result["state"] == "failed"
    assert env.store.get_run("handler_cb", RUN_ID).state == "failed"
    (alert,) = env.ses.sent_messages
    assert alert.subject.startswith("Airflow alert: ") and alert.destinations["ToAddresses"] == ["ops@example.com"]
    assert "Try 1 out of 1<br>Exception:<br>boom<br>" in alert.body

    (request,) = env.invokes  # the run's end sent the DAG's failure callback to the worker Lambda
    assert request["kind"] == "dag_callback" and request["reason"] == "task_failure"
    assert request["ti_task_id"] == "only" and request["success"] is False
    ran = env.handler.handler(request, lambda_context(WORKER))
    assert ran == {"status": "callbacks_ran", "dag_id": "handler_cb", "run_id": RUN_ID, "reason": "task_failure"}
    page = env.ses.sent_messages[1]
    assert page.subject == "handler_cb failed: task_failure" and page.destinations["ToAddresses"] == [
        "oncall@example.com"]
    assert page.body == f"run {RUN_ID}, task only"
    log = env.s3.get_object(Bucket=BUCKET, Key=f"logs/handler_cb/{RUN_ID}/@dag_callbacks/-1/1.log")
    assert "Executing on_failure dag callback page_oncall" in log["Body"].read().decode()

    # Lambda delivered the request again: nothing runs twice.
    again = env.handler.handler(request, lambda_context(WORKER))
    assert again["status"] == "not_runnable" and len(env.ses.sent_messages) == 2
    assert env.store.get_run("handler_cb", RUN_ID).state == "failed"
    assert env.store.get_ti(TIKey("handler_cb", RUN_ID, "only")).state == "failed"

