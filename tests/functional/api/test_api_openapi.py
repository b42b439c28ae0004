"""The served OpenAPI document: a valid OpenAPI 3.1 subset of Airflow's, covering every route Updraft serves."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import yaml
from openapi_spec_validator import OpenAPIV31SpecValidator

from updraft.api.audit import recorded
from updraft.api.openapi import AIRFLOW_DOCUMENT, NOT_IN_AIRFLOW, airflow_operation, api_routes, document
from updraft.api.routes import all_routes

AIRFLOW_CORE_YAML = Path("/work/shared/notes/airflow-rest-api-v2.openapi.yaml")


@pytest.fixture(scope="module")
def served() -> dict:
    return document(all_routes())


def test_every_route_updraft_serves_is_in_airflow_s_document_with_the_same_method_and_path():
    outside = {(r.method, r.path) for r in api_routes(all_routes()) if airflow_operation(r.method, r.path) is None}
    assert outside == set(NOT_IN_AIRFLOW)  # the ones Airflow lacks are listed, each with its reason
    assert all(len(why) > 40 for why in NOT_IN_AIRFLOW.values())


def test_the_document_describes_exactly_the_served_routes_with_airflow_s_operations(served):
    documented = {(m.upper(), p) for p, item in served["paths"].items() for m in item}
    assert documented == {(r.method, r.path) for r in api_routes(all_routes())} - set(NOT_IN_AIRFLOW)
    for path, item in served["paths"].items():
        for method, operation in item.items():
            assert operation == airflow_operation(method, path)


def test_the_served_document_is_valid_openapi_3_1(served):
    OpenAPIV31SpecValidator(served).validate()
    assert served["openapi"].startswith("3.1")
    assert "DAGResponse" in served["components"]["schemas"] and "DAGWarningCollectionResponse" not in served["components"]["schemas"]


def test_a_recorded_change_is_named_as_airflow_names_it():
    """The audit log names an event after the route function (``updraft.api.audit``), as Airflow's
    ``action_logging`` names it after its endpoint, whose name is the operationId: so they must agree."""
    for route in all_routes():
        if recorded(route):
            assert route.endpoint.__name__ == airflow_operation(route.method, route.path)["operationId"], route


def test_the_shipped_copy_is_airflow_s_document():
    if not AIRFLOW_CORE_YAML.exists():
        pytest.skip("Airflow's OpenAPI document is not on this machine")
    shipped = json.loads(gzip.decompress(AIRFLOW_DOCUMENT.read_bytes()))
    core = yaml.load(AIRFLOW_CORE_YAML.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    assert {p: shipped["paths"][p] for p in core["paths"]} == core["paths"]
    assert {"/auth/token", "/auth/token/cli"} <= set(shipped["paths"])  # the simple auth manager's document


def test_openapi_json_is_served_where_airflow_serves_it(api):
    answer = api.get("/openapi.json")
    assert answer.status == 200
    assert "/api/v2/dags" in answer.body["paths"] and "/openapi.json" not in answer.body["paths"]
    assert "delete" in answer.body["paths"]["/api/v2/dags/{dag_id}"]
