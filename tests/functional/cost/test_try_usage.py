"""A try records what it used on its own record, by the end write it makes anyway (worker handler on moto)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import boto3
import pytest
from botocore.client import BaseClient

from tests.functional.lambda_helpers import WORKER, claimed_dispatch, lambda_context, spied_services, worker_account
from updraft.model.records import TIKey
from updraft.model.usage import Usage
from updraft.runtime import usage_meter

TABLE = "updraft-usage-test"
BUCKET = "updraft-usage-data"
DAG_FILE = '''
import datetime
from airflow.sdk import DAG
from airflow.providers.standard.operators.bash import BashOperator

with DAG("usage_chain", schedule=None, start_date=datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)):
    BashOperator(task_id="first", bash_command="echo metered") >> BashOperator(task_id="second", bash_command="echo 2")
'''


@pytest.fixture
def env(tmp_path, monkeypatch):
    usage_meter.install()  # as the handler does before its first client: every client made from here reports
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)
    with worker_account(tmp_path, monkeypatch, table=TABLE, bucket=BUCKET, dag_id="usage_chain",
                        dag_file=DAG_FILE) as account:
        dispatch = claimed_dispatch(account.store, "usage_chain")
        from functions.worker import handler

        spied_services(handler, monkeypatch, account.lam)
        yield SimpleNamespace(handler=handler, store=account.store, dispatch=dispatch)


def _counted_requests(monkeypatch):
    """Every request the process sends, by service (to compare with what the try recorded)."""
    sent: list[tuple[str, str]] = []
    original = BaseClient._make_api_call

    def call(client, operation, params):
        sent.append((client.meta.service_model.service_name, operation))
        return original(client, operation, params)

    monkeypatch.setattr(BaseClient, "_make_api_call", call)
    return sent


def test_a_lambda_try_records_its_requests_and_gb_seconds_without_a_write_of_its_own(env, monkeypatch):
    sent = _counted_requests(monkeypatch)
    result = env.handler.handler(env.dispatch.to_payload(), lambda_context(WORKER))
    assert result["state"] == "success"

    ti = env.store.get_ti(TIKey("usage_chain", env.dispatch.key.run_id, "first"))
    usage = Usage.from_record(ti.usage)
    assert usage is not None and usage.try_number == 1
    assert usage.lambda_requests == 1
    assert usage.lambda_gb_s == pytest.approx(usage.seconds * 1.0)  # 1024 MB for as long as it ran
    assert 0 < usage.seconds < 60
    # Up to the end write: the start, the reads, the log; the end write itself counted as one estimated unit.
    ddb_before_end = [op for service, op in sent if service == "dynamodb"]
    assert usage.dynamodb_requests >= 2
    assert usage.dynamodb_requests <= len(ddb_before_end)
    assert usage.dynamodb_write_units >= 2 and usage.dynamodb_read_units > 0
    assert usage.dynamodb_estimated_write_units >= 1
    assert usage.s3_write_requests >= 1 and usage.s3_bytes >= len("metered")  # the try's log, put to S3
    assert usage.fargate_vcpu_s == 0 and usage.sfn_transitions == 0


@pytest.mark.slow
def test_a_fargate_try_records_vcpu_and_gb_seconds_with_the_minute_minimum(env, monkeypatch, capsys):
    payload = {**env.dispatch.to_payload(), "executor": "fargate", "compute": {"cpu": 1024, "memory": 4096}}
    monkeypatch.setenv("UPDRAFT_DISPATCH", json.dumps(payload))
    assert env.handler.main() == 0
    usage = Usage.from_record(env.store.get_ti(TIKey("usage_chain", env.dispatch.key.run_id, "first")).usage)
    assert usage.lambda_requests == 0 and usage.lambda_gb_s == 0
    assert usage.fargate_vcpu_s == pytest.approx(1.0 * 60)  # a short task is billed its first minute
    assert usage.fargate_gb_s == pytest.approx(4.0 * 60)


def test_without_a_meter_nothing_is_recorded(env, monkeypatch):
    """``dags test`` and the capacity bench call the worker without the handler: the record has no usage."""
    from updraft.runtime.worker import handle_dispatch

    svc = env.handler.services()
    handle_dispatch(env.dispatch, store=svc.store, loader=svc.loader, scheduler=svc.scheduler,
                    now_fn=env.handler._now, log_sink=svc.log_sink, in_process=True)
    assert env.store.get_ti(TIKey("usage_chain", env.dispatch.key.run_id, "first")).usage is None
