"""The API Lambda handler, invoked with the sample API Gateway REST proxy event against moto's DynamoDB."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from moto import mock_aws

from tests.functional.lambda_helpers import lambda_context
from updraft.store.config import StoreConfig
from updraft.store.dynamo import DynamoStore
from updraft.store.tables import create_table

ROOT = Path(__file__).resolve().parents[2]
EVENT = ROOT / "events" / "api" / "health.json"
TABLE = "updraft-api-test"
REGION = "us-east-1"


@pytest.fixture
def api(monkeypatch):
    for name, value in {"AWS_REGION": REGION, "UPDRAFT_TABLE": TABLE}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("UPDRAFT_BUCKET", raising=False)
    with mock_aws():
        from functions.api import handler

        monkeypatch.setattr("updraft.services._shared", None)  # built from the environment above on first use
        yield handler


def _get(handler, path: str | None = None) -> tuple[int, dict]:
    event = json.loads(EVENT.read_text())
    if path is not None:
        event["path"] = path
        event["pathParameters"] = {"proxy": path.lstrip("/")}
    response = handler.handler(event, lambda_context("api"))
    assert response["multiValueHeaders"]["Content-Type"] == ["application/json"]
    return response["statusCode"], json.loads(response["body"])


def test_health_reports_a_reachable_store_and_no_heartbeat_it_cannot_know(api):
    config = StoreConfig(table_name=TABLE, region=REGION)
    create_table(config)
    DynamoStore(config).get_pool("default_pool")  # what the first scheduler pass creates

    status, body = _get(api)

    assert status == 200
    assert body == {
        "metadatabase": {"status": "healthy"},
        "scheduler": {"status": None, "latest_scheduler_heartbeat": None},
        "triggerer": {"status": None, "latest_triggerer_heartbeat": None},
        "dag_processor": {"status": None, "latest_dag_processor_heartbeat": None},
    }


def test_health_on_a_fresh_table_is_healthy_and_writes_nothing(api):
    config = StoreConfig(table_name=TABLE, region=REGION)
    create_table(config)

    status, body = _get(api)

    assert (status, body["metadatabase"]) == (200, {"status": "healthy"})
    # A read only: the API role has dynamodb:GetItem and nothing else.
    import boto3

    assert boto3.client("dynamodb", region_name=REGION).scan(TableName=TABLE)["Count"] == 0


def test_health_without_a_table_reports_the_metadatabase_unhealthy(api):
    status, body = _get(api)
    assert status == 200  # as Airflow's: a monitor reads the body
    assert body["metadatabase"] == {"status": "unhealthy"}


def test_every_request_is_counted_for_the_api_alarm(api, capsys):
    _get(api)
    (emf,) = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"_aws"' in line]
    assert emf["service"] == "updraft-api" and emf["ApiRequests"] == [1.0] and emf["Api5xx"] == [0.0]


def test_unknown_route_is_404(api):
    status, body = _get(api, "/api/v2/nothing-here")
    assert status == 404
    assert body["statusCode"] == 404
