"""The API Lambda handler on moto: a table with DAGs, runs and an import error, and a caller that sends REST
proxy events built as local mode's API Gateway builds them (``updraft.local.api_gateway.proxy_event``)."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import pytest
from moto import mock_aws

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG, Param, task
from tests.functional.lambda_helpers import lambda_context
from tests.mocked_clients import mocked_client
from updraft.local.api_gateway import proxy_event
from updraft.model.parse_results import ImportErrorRecord, ParsedFile
from updraft.scheduling.commands.dag_registration import register_parsed_file, set_paused
from updraft.serialization import serialize_dag
from updraft.store.config import StoreConfig
from updraft.store.dynamo import DynamoStore
from updraft.store.tables import create_table

TABLE = "updraft-api-test"
BUCKET = "updraft-api-bucket"
REGION = "us-east-1"
START = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
NOW = dt.datetime(2024, 3, 1, tzinfo=dt.UTC)


@dataclass
class Answer:
    status: int
    body: Any
    headers: dict[str, Any]


class Api:
    """Calls the handler with one request, as API Gateway would deliver it."""

    def __init__(self, handler: Any) -> None:
        self.handler = handler

    def __call__(self, method: str, path: str, query: dict[str, Any] | list[tuple[str, str]] | None = None,
                 body: Any = None, *, raw_body: str | None = None, headers: dict[str, str] | None = None) -> Answer:
        target = path + ("?" + urlencode(query, doseq=True) if query else "")
        data = raw_body if raw_body is not None else (json.dumps(body) if body is not None else "")
        event = proxy_event(method, target, {"Content-Type": "application/json", **(headers or {})}, data.encode())
        response = self.handler.handler(event, lambda_context("api"))
        text = response.get("body") or ""
        headers_out = {k: v[-1] for k, v in (response.get("multiValueHeaders") or {}).items()}
        headers_out.update(response.get("headers") or {})
        is_json = "json" in str(headers_out.get("Content-Type", "application/json"))  # the UI's pages are HTML
        return Answer(response["statusCode"], (json.loads(text) if is_json else text) if text else None, headers_out)

    def get(self, path: str, **kwargs: Any) -> Answer:
        return self("GET", path, **kwargs)


def example_dags() -> list[DAG]:
    with DAG("etl", schedule="@daily", start_date=START, tags=["team-a", "daily"], catchup=False,
             description="Extract, transform, load", params={"n": Param(1, type="integer", minimum=0)},
             max_active_tasks=4) as etl:
        extract = EmptyOperator(task_id="extract", pool="etl_pool")
        load = EmptyOperator(task_id="load", retries=2)
        extract >> load
    with DAG("fanout", schedule=None, start_date=START, tags=["team-b"], dag_display_name="Fan out") as fanout:
        @task
        def double(x: int) -> int:
            return 2 * x

        double.expand(x=[1, 2, 3])
    with DAG("reporting", schedule="@hourly", start_date=START, tags=["team-a"]) as reporting:
        EmptyOperator(task_id="report")
    return [etl, fanout, reporting]


def seed(store: DynamoStore) -> None:
    """What the parser stores for three DAG files (etl and reporting unpaused) and one broken file."""
    for dag in example_dags():
        doc = serialize_dag(dag, relative_fileloc=f"{dag.dag_id}.py", file_hash="h")
        register_parsed_file(store, ParsedFile(relative_path=f"{dag.dag_id}.py", file_hash="h", dags=[doc]), now=NOW)
    for dag_id in ("etl", "reporting"):
        set_paused(store, dag_id, False)
    register_parsed_file(store, ParsedFile(relative_path="broken.py", file_hash="b", import_errors=[
        ImportErrorRecord(filename="broken.py", lineno=3, message="NameError: name 'x' is not defined",
                          stacktrace="Traceback (most recent call last):\nNameError: name 'x' is not defined")]),
        now=NOW)


@pytest.fixture
def aws_env(monkeypatch):
    for name, value in {"AWS_REGION": REGION, "UPDRAFT_TABLE": TABLE, "UPDRAFT_BUCKET": BUCKET}.items():
        monkeypatch.setenv(name, value)
    for name in ("UPDRAFT_LOCAL_COMPUTE", "UPDRAFT_SCHEDULER_FUNCTION", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    with mock_aws():
        mocked_client("s3").create_bucket(Bucket=BUCKET)
        monkeypatch.setattr("updraft.services._shared", None)  # built from the environment above on first use
        yield


# What seed() wrote to the table, as DynamoDB items, taken from the first test of the process that seeded.
_SEEDED_ITEMS: list[dict[str, Any]] = []


def _seed_from_copy(store: DynamoStore) -> None:
    """The table as seed() leaves it: seeded by seed() in the first test of the process, then a copy of the same
    items written into each later test's new table (seed's items are the same every time: its DAGs, a fixed
    ``NOW``; one batch write instead of its 21 conditional writes and reads)."""
    dynamodb = mocked_client("dynamodb")
    if _SEEDED_ITEMS:
        for start in range(0, len(_SEEDED_ITEMS), 25):
            requests = [{"PutRequest": {"Item": item}} for item in _SEEDED_ITEMS[start:start + 25]]
            assert not dynamodb.batch_write_item(RequestItems={TABLE: requests}).get("UnprocessedItems")
        return
    seed(store)
    answer = dynamodb.scan(TableName=TABLE, ConsistentRead=True)
    assert "LastEvaluatedKey" not in answer
    # The copy holds the table only: a seed that also wrote to the bucket would need that copied too.
    assert mocked_client("s3").list_objects_v2(Bucket=BUCKET)["KeyCount"] == 0
    _SEEDED_ITEMS.extend(answer["Items"])


@pytest.fixture
def store(aws_env) -> DynamoStore:
    config = StoreConfig(table_name=TABLE, region=REGION, s3_bucket=BUCKET)
    create_table(config, client=mocked_client("dynamodb"))
    store = DynamoStore(config)
    _seed_from_copy(store)
    return store


@pytest.fixture
def api(store) -> Api:
    from functions.api import handler

    return Api(handler)
