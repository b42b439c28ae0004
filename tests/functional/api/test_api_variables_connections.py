"""Variable and connection routes on moto, with the environment's KMS key: CRUD, masking exactly as Airflow's
API masks, update_mask, the bulk PATCH and the disabled connection test."""

from __future__ import annotations

import json

import boto3
import pytest

from tests.functional.api.conftest import REGION


@pytest.fixture
def kms_api(api, monkeypatch):
    monkeypatch.setenv("UPDRAFT_KMS_KEY", boto3.client("kms", region_name=REGION).create_key()["KeyMetadata"]["KeyId"])
    return api


def test_variables_crud_with_masking_and_update_mask(kms_api):
    api = kms_api
    created = api("POST", "/api/v2/variables", body={"key": "db_password", "value": "hunter2-secret",
                                                     "description": "the db"})
    assert created.status == 201
    assert created.body == {"key": "db_password", "value": "***", "description": "the db", "is_encrypted": True,
                            "team_name": None}
    assert api("POST", "/api/v2/variables", body={"key": "db_password", "value": "x"}).status == 409
    config = {"region": "eu-west-1", "api_key": "k-123456", "nested": {"token": "t-123456"}}
    assert api("POST", "/api/v2/variables", body={"key": "config", "value": config}).status == 201
    assert api("POST", "/api/v2/variables", body={"key": "plain", "value": "visible"}).status == 201

    shown = api.get("/api/v2/variables/config").body
    assert json.loads(shown["value"]) == {"region": "eu-west-1", "api_key": "***", "nested": {"token": "***"}}
    listed = api.get("/api/v2/variables", query={"variable_key_pattern": "p%", "order_by": "-key"}).body
    assert listed["total_entries"] == 2 and [v["key"] for v in listed["variables"]] == ["plain", "db_password"]
    assert listed["variables"][0]["value"] == "visible"

    patched = api("PATCH", "/api/v2/variables/plain", query={"update_mask": "description"},
                  body={"key": "plain", "value": "ignored", "description": "described"})
    assert (patched.body["value"], patched.body["description"]) == ("visible", "described")
    assert api("PATCH", "/api/v2/variables/plain", body={"key": "other", "value": "x"}).status == 400
    assert api("PATCH", "/api/v2/variables/nope", body={"key": "nope", "value": "x"}).status == 404
    assert api("DELETE", "/api/v2/variables/plain").status == 204
    missing = api.get("/api/v2/variables/plain")
    assert (missing.status, missing.body) == (404, {"detail": "The Variable with key: `plain` was not found"})


def test_bulk_variables_as_airflow(kms_api):
    api = kms_api
    api("POST", "/api/v2/variables", body={"key": "a", "value": "1"})
    answer = api("PATCH", "/api/v2/variables", body={"actions": [
        {"action": "create", "entities": [{"key": "a", "value": "x"}, {"key": "b", "value": "2"}],
         "action_on_existence": "skip"},
        {"action": "update", "entities": [{"key": "a", "value": "10"}, {"key": "zz", "value": "0"}]},
        {"action": "delete", "entities": ["b", "zz"], "action_on_non_existence": "skip"},
    ]})
    assert answer.status == 200
    assert answer.body["create"] == {"success": ["b"], "errors": []}
    assert answer.body["update"]["success"] == [] and answer.body["update"]["errors"][0]["status_code"] == 404
    assert answer.body["delete"] == {"success": ["b"], "errors": []}
    assert api.get("/api/v2/variables/a").body["value"] == "1"
    bad = api("PATCH", "/api/v2/variables", body={"actions": [{"action": "create", "entities": [{"key": "c"}]}]})
    assert bad.status == 422 and api.get("/api/v2/variables/c").status == 404


def test_connections_crud_masking_merge_and_test_disabled(kms_api, store):
    api = kms_api
    body = {"connection_id": "warehouse", "conn_type": "postgres", "host": "db.example.com", "login": "etl",
            "password": "s3cr3t-pw", "port": 5432, "schema": "dw",
            "extra": json.dumps({"sslmode": "require", "private_key": "-----KEY-----"})}
    created = api("POST", "/api/v2/connections", body=body)
    assert created.status == 201
    expected = {**body, "password": "***", "extra": json.dumps({"sslmode": "require", "private_key": "***"}),
                "description": None, "team_name": None}
    assert created.body == expected
    assert api("POST", "/api/v2/connections", body=body).status == 409
    assert api.get("/api/v2/connections").body == {"connections": [expected], "total_entries": 1}

    # A client sends back what it read: the masked password and extra field keep their stored values.
    patched = api("PATCH", "/api/v2/connections/warehouse", body={**expected, "host": "db2.example.com"})
    assert patched.status == 200 and patched.body["host"] == "db2.example.com"
    from updraft.services import shared_services

    stored = shared_services().store.get_connection("warehouse")
    assert stored.password == "s3cr3t-pw" and json.loads(stored.extra)["private_key"] == "-----KEY-----"
    raw = shared_services().store.models.connection.get("CONNECTION#warehouse", "META")
    assert raw.encrypted and b"s3cr3t-pw" not in bytes(raw.secret)

    assert api("POST", "/api/v2/connections", body={**body, "connection_id": "bad id"}).status == 422
    assert api("POST", "/api/v2/connections", body={**body, "connection_id": "x", "extra": "[1]"}).status == 422
    tested = api("POST", "/api/v2/connections/test", body=body)
    assert tested.status == 403 and tested.body["detail"].startswith("Testing connections is disabled")
    assert api("DELETE", "/api/v2/connections/warehouse").status == 204
    assert api("DELETE", "/api/v2/connections/warehouse").status == 404
