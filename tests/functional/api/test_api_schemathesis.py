"""schemathesis against the served OpenAPI document, through local mode's API Gateway (real HTTP) on moto.

Each read operation (every GET, and the read-only ``dagRuns/list`` batch) gets a few generated requests built
from its Airflow schema (hypothesis, derandomized: the same requests every run), on a table holding the API
tests' DAGs, a run with a task instance and an XCom, and an import error. Half the generated requests have
their path parameters replaced by ids that exist (``KNOWN``), so the 200 answers are checked too, not only the
404s of random ids. Checks: no 5xx, and every response conforms to the operation's schema (status code
documented, body valid against it). Bounded to keep the suite fast: see ``MAX_EXAMPLES``.

Every operation that takes a body also gets generated requests with one hostile shape each (``HOSTILE``): a
body nested 100,000 deep, a field nested 1,000 deep, a lone surrogate in a field or a key, a 500 KB field. None
may answer 5xx; the nested and surrogate shapes are refused with a 4xx in Airflow's error shape.
"""

from __future__ import annotations

import collections
import copy
import datetime as dt
import json

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from moto import mock_aws
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance, status_code_conformance

from tests.functional.api.conftest import BUCKET, REGION, TABLE, seed
from tests.functional.lambda_helpers import lambda_context
from updraft.api.openapi import document
from updraft.api.routes import all_routes

MAX_EXAMPLES = 5
RUN_ID = "manual__schemathesis"
KNOWN = {"dag_id": "etl", "dag_run_id": RUN_ID, "task_id": "extract", "map_index": -1, "try_number": 1,
         "xcom_key": "return_value", "pool_name": "default_pool"}
STATUSES: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
READ_ONLY_POSTS = {("POST", "/api/v2/dags/{dag_id}/dagRuns/list")}
DOCUMENT = document(all_routes())


def _as_airflow_answers(served: dict) -> dict:
    """The document with the one place Airflow's own answers knowingly differ from it: a log message's
    ``timestamp`` is declared a date-time string (``WithJsonSchema`` in Airflow's ``StructuredLogMessage``) but
    is ``null`` for a message without one, as Airflow sends it (and Updraft, whose log lines carry none)."""
    out = copy.deepcopy(served)
    message = out["components"]["schemas"]["StructuredLogMessage"]["properties"]
    message["timestamp"] = {"anyOf": [message["timestamp"], {"type": "null"}]}
    return out


SCHEMA = schemathesis.openapi.from_dict(_as_airflow_answers(DOCUMENT))
OPERATIONS = sorted((method.upper(), path) for path, item in DOCUMENT["paths"].items() for method in item
                    if method == "get" or (method.upper(), path) in READ_ONLY_POSTS)
BODY_OPERATIONS = sorted((method.upper(), path) for path, item in DOCUMENT["paths"].items()
                         for method, operation in item.items() if "requestBody" in operation)


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

            s3 = boto3.client("s3", region_name=REGION)
            s3.create_bucket(Bucket=BUCKET)
            s3.put_object(Bucket=BUCKET, Key="dags/etl.py", Body=b"# the etl DAG's file\n")
            mp.setattr("updraft.services._shared", None)
            config = StoreConfig(table_name=TABLE, region=REGION, s3_bucket=BUCKET)
            create_table(config)
            store = DynamoStore(config)
            seed(store)
            _add_a_run(store)
            from updraft.api.routes.import_errors import error_id

            KNOWN["import_error_id"] = error_id(store.list_import_errors()[0])
            gateway = LocalApiGateway(lambda event: handler.handler(event, lambda_context("api")))
            try:
                yield gateway.url
            finally:
                gateway.close()
                total = sum(sum(c.values()) for c in STATUSES.values())
                print(f"\nschemathesis: {len(STATUSES)} operations, {total} requests")
                for operation, counts in sorted(STATUSES.items()):
                    print(f"  {operation}: {dict(sorted(counts.items()))}")


def _add_a_run(store) -> None:
    from updraft.model.records import TIKey
    from updraft.model.states import TaskInstanceState
    from updraft.scheduling.commands.triggering import trigger_dag

    now = dt.datetime(2024, 3, 1, tzinfo=dt.UTC)
    trigger_dag(store, "etl", now=now, run_id=RUN_ID)
    key = TIKey("etl", RUN_ID, "extract")
    store.create_ti(key, state=TaskInstanceState.SUCCESS, fields={"try_number": 1})
    store.put_xcom(key, "return_value", {"rows": 3}, now=now)


def _with_known_ids(case, known: bool):
    if known and case.path_parameters:
        case.path_parameters = {name: KNOWN.get(name, value) for name, value in case.path_parameters.items()}
    return case


def _airflow_s_undocumented_400(response) -> bool:
    """Airflow answers an ``order_by`` it does not allow with 400 (its ``SortParam``) on routes whose document
    lists no 400: Updraft answers as Airflow does, so that status is not held against the document."""
    return response.status_code == 400 and "Ordering with" in response.text


@pytest.mark.slow
@pytest.mark.parametrize(("method", "path"), OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS])
def test_generated_requests_get_no_5xx_and_responses_conform_to_the_schema(base_url, method, path):
    operation = SCHEMA[path][method]

    @settings(max_examples=MAX_EXAMPLES, derandomize=True, deadline=None, database=None,
              phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
    @given(case=st.builds(_with_known_ids, operation.as_strategy(), st.booleans()))
    def check(case):
        response = case.call(base_url=base_url)
        STATUSES[f"{method} {path}"][response.status_code] += 1
        checks = [not_a_server_error, response_schema_conformance]
        if not _airflow_s_undocumented_400(response):
            checks.append(status_code_conformance)
        case.validate_response(response, checks=checks)

    check()


def _nested(levels: int) -> str:
    return '{"a":' * levels + "1" + "}" * levels


def _with_field(body: object, name: str, raw_value: str) -> str:
    """The generated body (an object, else an empty one) as JSON text with ``name`` set to ``raw_value``, itself
    JSON text (so values no client library would encode, 1,000 levels deep or a lone surrogate, can be sent)."""
    others = {k: v for k, v in body.items() if k != name} if isinstance(body, dict) else {}
    rest = json.dumps(others)[1:]
    return "{" + json.dumps(name) + ": " + raw_value + (", " + rest if others else "}")


# name -> (refused with a 4xx, the body text built from the generated body and one of the operation's fields)
HOSTILE = {
    "body nested 100,000 deep": (True, lambda body, name: "[" * 100_000 + "]" * 100_000),
    "field nested 1,000 deep": (True, lambda body, name: _with_field(body, name, _nested(1000))),
    "lone surrogate in a field": (True, lambda body, name: _with_field(body, name, '"x\\ud800y"')),
    "lone surrogate in a key": (True, lambda body, name: _with_field(body, name, '{"\\udc00": 1}')),
    "500 KB field": (False, lambda body, name: _with_field(body, name, json.dumps("x" * 500_000))),
}


def _field_names(method: str, path: str) -> list[str]:
    """The top-level fields of the operation's body schema (its first object schema when it is a union)."""
    schema = DOCUMENT["paths"][path][method.lower()]["requestBody"]["content"]["application/json"]["schema"]
    schema = next((s for s in schema.get("anyOf", []) if "$ref" in s), schema)
    if "$ref" in schema:
        schema = DOCUMENT["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return sorted(schema.get("properties") or {"body": {}})


@pytest.mark.slow
@pytest.mark.parametrize(("method", "path"), BODY_OPERATIONS, ids=[f"{m} {p}" for m, p in BODY_OPERATIONS])
def test_hostile_bodies_get_a_4xx_in_airflow_s_shape_never_a_5xx(base_url, method, path):
    operation = SCHEMA[path][method]
    names = _field_names(method, path)

    @settings(max_examples=MAX_EXAMPLES * 2, derandomize=True, deadline=None, database=None,
              phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
    @given(case=st.builds(_with_known_ids, operation.as_strategy(), st.booleans()),
           shape=st.sampled_from(sorted(HOSTILE)), name=st.sampled_from(names))
    def check(case, shape, name):
        refused, build = HOSTILE[shape]
        sent = case.as_transport_kwargs(base_url=base_url)
        sent.pop("json", None)
        sent["headers"] = {**(sent.get("headers") or {}), "Content-Type": "application/json"}
        response = requests.request(**{**sent, "data": build(case.body, name).encode()}, timeout=60)
        STATUSES[f"{method} {path} ({shape})"][response.status_code] += 1
        assert response.status_code < 500, (shape, name, response.status_code, response.text[:500])
        if refused:
            assert 400 <= response.status_code < 500, (shape, name, response.status_code, response.text[:500])
        if response.status_code >= 400:
            assert "detail" in response.json(), (shape, name, response.status_code, response.text[:500])

    check()
