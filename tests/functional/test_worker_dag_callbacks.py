"""End to end through the worker Lambda handler on moto: a failing try emails its alert through SES, the run's end
sends the DAG's failure callback to the worker Lambda, and the callback (which emails too) runs there once."""

from __future__ import annotations

from types import SimpleNamespace

import boto3
import pytest
from moto.core import DEFAULT_ACCOUNT_ID
from moto.ses.models import ses_backends

from tests.functional.lambda_helpers import (
    REGION,
    WORKER,
    claimed_dispatch,
    lambda_context,
    spied_services,
    worker_account,
)
from updraft.model.records import TIKey

TABLE = "updraft-worker-callbacks-test"
BUCKET = "updraft-dev-data"
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
    with worker_account(tmp_path, monkeypatch, table=TABLE, bucket=BUCKET, dag_id="handler_cb", dag_file=DAG_FILE,
                        env={"UPDRAFT_EMAIL_FROM": SENDER}) as account:
        boto3.client("ses", region_name=REGION).verify_email_identity(EmailAddress=SENDER)
        dispatch = claimed_dispatch(account.store, "handler_cb", run_id=RUN_ID)
        from functions.worker import handler

        invokes = spied_services(handler, monkeypatch, account.lam)
        yield SimpleNamespace(handler=handler, store=account.store, s3=account.s3, dispatch=dispatch, invokes=invokes,
                              ses=ses_backends[DEFAULT_ACCOUNT_ID][REGION])


@pytest.mark.slow
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

