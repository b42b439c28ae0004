"""schemathesis against the served OpenAPI document, through local mode's API Gateway (real HTTP) on moto.

Each read operation (every GET, and the read-only ``dagRuns/list`` batch) gets a few generated requests built
from its Airflow schema (hypothesis, derandomized: the same requests every run), on a table holding the API
tests' DAGs, runs and import error. Checks: no 5xx, and every response conforms to the operation's schema
(status code documented, body valid against it). Bounded to keep the suite fast: see ``MAX_EXAMPLES``.
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from moto import mock_aws
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance, status_code_conformance

from tests.functional.api.conftest import BUCKET, REGION, TABLE, seed
from tests.functional.lambda_helpers import lambda_context
from updraft.api.openapi import document
from updraft.api.routes import all_routes

MAX_EXAMPLES = 6
READ_ONLY_POSTS = {("POST", "/api/v2/dags/{dag_id}/dagRuns/list")}
DOCUMENT = document(all_routes())
SCHEMA = schemathesis.openapi.from_dict(DOCUMENT)
OPERATIONS = sorted((method.upper(), path) for path, item in DOCUMENT["paths"].items() for method in item
                    if method == "get" or (method.upper(), path) in READ_ONLY_POSTS)


@pytest.fixture(scope="module")
def base_url():
    with pytest.MonkeyPatch.context() as mp:
        for name, value in {"AWS_REGION": REGION, "UPDRAFT_TABLE": TABLE, "UPDRAFT_BUCKET": BUCKET}.items():
            mp.setenv(name, value)
        for name in ("UPDRAFT_LOCAL_COMPUTE", "UPDRAFT_SCHEDULER_FUNCTION", "AWS_ENDPOINT_URL"):
            mp.delenv(name, raising=False)
        with mock_aws():
            import boto3

            from functions.api import handler
            from updraft.local.api_gateway import LocalApiGateway
            from updraft.store.config import StoreConfig
            from updraft.store.dynamo import DynamoStore
            from updraft.store.tables import create_table

            boto3.client("s3", region_name=REGION).create_bucket(Bucket=BUCKET)
            mp.setattr("updraft.services._shared", None)
            config = StoreConfig(table_name=TABLE, region=REGION, s3_bucket=BUCKET)
            create_table(config)
            seed(DynamoStore(config))
            gateway = LocalApiGateway(lambda event: handler.handler(event, lambda_context("api")))
            try:
                yield gateway.url
            finally:
                gateway.close()


@pytest.mark.parametrize(("method", "path"), OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS])
def test_generated_requests_get_no_5xx_and_responses_conform_to_the_schema(base_url, method, path):
    operation = SCHEMA[path][method]

    @settings(max_examples=MAX_EXAMPLES, derandomize=True, deadline=None, database=None,
              phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
    @given(case=operation.as_strategy())
    def check(case):
        response = case.call(base_url=base_url)
        case.validate_response(response, checks=[not_a_server_error, status_code_conformance,
                                                 response_schema_conformance])

    check()
