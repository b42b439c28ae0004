"""The asset-events Lambda handler with its sample events on moto: an S3 upload under the asset-events prefix and
an SQS message become asset events, and the asset-scheduled DAG's run is created (and started) at once."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from types import SimpleNamespace

import boto3
import pytest
from moto import mock_aws

from airflow.sdk import DAG, Asset, task
from tests.functional.lambda_helpers import SpyLambda, echo_function_zip, lambda_context
from tests.functional.scheduling.harness import store_dags
from updraft.store.assets import asset_id_of
from updraft.store.config import StoreConfig
from updraft.store.dynamo import DynamoStore
from updraft.store.tables import create_table

EVENTS = Path(__file__).resolve().parents[2] / "events" / "asset_events"
TABLE, BUCKET, WORKER, REGION = "updraft-assets-test", "updraft-dev-123456789012-us-east-1", "updraft-worker", "us-east-1"
SALES = Asset(uri=f"s3://{BUCKET}/asset-events/sales", name="sales")


def _event(name: str) -> dict:
    return json.loads((EVENTS / name).read_text())


@pytest.fixture
def env(monkeypatch):
    for name, value in {"AWS_REGION": REGION, "UPDRAFT_TABLE": TABLE, "UPDRAFT_BUCKET": BUCKET,
                        "UPDRAFT_WORKER_FUNCTION": WORKER}.items():
        monkeypatch.setenv(name, value)
    with mock_aws(config={"lambda": {"use_docker": False}}):
        config = StoreConfig(table_name=TABLE, region=REGION)
        create_table(config)
        boto3.client("s3", region_name=REGION).create_bucket(Bucket=BUCKET)
        role = boto3.client("iam", region_name=REGION).create_role(RoleName="w", AssumeRolePolicyDocument="{}")
        lam = boto3.client("lambda", region_name=REGION)
        lam.create_function(FunctionName=WORKER, Runtime="python3.12", Role=role["Role"]["Arn"],
                            Handler="handler.handler", Code={"ZipFile": echo_function_zip()})
        store = DynamoStore(config)
        with DAG("on_sales", schedule=SALES, start_date=dt.datetime(2024, 1, 1, tzinfo=dt.UTC)) as dag:
            @task
            def load():
                return None

            load()
        store_dags(store, dag, now=dt.datetime.now(dt.UTC))
        from functions.asset_events import handler

        monkeypatch.setattr("updraft.services._shared", None)
        spy = SpyLambda(lam, WORKER)
        handler.services()._clients["lambda"] = spy
        yield SimpleNamespace(handler=handler, store=store, invokes=spy.payloads)


def test_uploads_and_messages_become_events_that_trigger_the_dag_once(env):
    # one environment for the three cases: each Lambda and table set-up costs more than the cases themselves
    event = _event("s3_object_created.json")
    result = env.handler.handler(event, lambda_context("asset-events"))
    assert result["recorded"] and result["unmatched"] == []
    [created] = result["runs_created"]
    assert created.startswith("on_sales/asset_triggered__")
    [recorded] = env.store.list_asset_events(asset_id_of("sales"))
    assert recorded.extra["key"] == "asset-events/sales/2026-11-22.csv" and recorded.extra["source"] == "s3"
    assert len(env.invokes) == 1  # the run started and its first task was dispatched
    again = env.handler.handler(event, lambda_context("asset-events"))  # redelivered: nothing new
    assert again["runs_created"] == [] and len(env.store.list_asset_events(asset_id_of("sales"))) == 1

    # an SQS message naming the asset: the next batch, so a second run (the first is still active: Airflow's
    # asset-triggered runs queue behind max_active_runs, they are not merged)
    result = env.handler.handler(_event("sqs_message.json"), lambda_context("asset-events"))
    assert len(result["runs_created"]) == 1
    extras = [e.extra for e in env.store.list_asset_events(asset_id_of("sales"))]
    assert {"rows": 1200, "source": "sqs"} in extras and len(extras) == 2

    # on AWS uploads arrive through EventBridge (the bucket's own notifications are the parser's)
    result = env.handler.handler(_event("eventbridge_object_created.json"), lambda_context("asset-events"))
    assert result["recorded"] == [
        f"sales: s3#s3://{BUCKET}/asset-events/sales/2026-11-23.csv#00617F08299329D189"]

    outside = _event("s3_object_created.json")
    outside["Records"][0]["s3"]["object"]["key"] = "asset-events/unknown/x.csv"
    assert env.handler.handler(outside, lambda_context("asset-events"))["unmatched"] == [
        f"s3://{BUCKET}/asset-events/unknown/x.csv"]
    with pytest.raises(ValueError, match="SQS asset event"):
        env.handler.handler({"Records": [{"eventSource": "aws:sqs", "messageId": "m", "body": "{}"}]},
                            lambda_context("asset-events"))
