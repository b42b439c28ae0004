"""Bodies and values the API cannot take answer 4xx saying why, never 500 (issue 34): JSON nested deeper than
``updraft.api.json_text.MAX_DEPTH``, lone surrogates, values larger than the store keeps in one item (or than KMS
encrypts), and stored values too deep to mask."""

from __future__ import annotations

import boto3
import pytest

from tests.functional.api.asset_helpers import seed_assets
from tests.functional.api.conftest import REGION
from updraft.api.json_text import MAX_DEPTH
from updraft.store.assets import asset_id_of
from updraft.store.connections import ConnectionRecord


def nested(levels: int, leaf: str = "1") -> str:
    return '{"a":' * levels + leaf + "}" * levels


def assert_too_deep(answer, *loc_prefix) -> None:
    assert answer.status == 422, answer.body
    (problem,) = answer.body["detail"]
    assert problem["type"] == "json_invalid" and problem["loc"][:len(loc_prefix)] == list(loc_prefix)
    assert problem["msg"] == f"JSON decode error: nested deeper than {MAX_DEPTH} levels"


@pytest.mark.parametrize(("method", "path"), [
    ("POST", "/api/v2/pools"), ("PATCH", "/api/v2/variables"), ("PATCH", "/api/v2/connections"),
    ("POST", "/api/v2/dags/etl/clearTaskInstances"), ("POST", "/api/v2/dags/etl/dagRuns"),
    ("PATCH", "/api/v2/dags/etl"), ("POST", "/api/v2/assets/events")])
def test_a_body_nested_100_000_deep_is_422_naming_the_limit(api, method, path):
    assert_too_deep(api(method, path, raw_body="[" * 100_000 + "]" * 100_000), "body")


def test_a_conf_nested_1000_deep_is_422_and_one_within_the_limit_triggers(api):
    deep = api("POST", "/api/v2/dags/etl/dagRuns", raw_body=f'{{"logical_date": null, "conf": {nested(1000)}}}')
    assert_too_deep(deep, "body")
    # The body is level 1 and conf level 2: a conf of MAX_DEPTH - 1 levels is the deepest taken.
    edge = api("POST", "/api/v2/dags/etl/dagRuns",
               raw_body=f'{{"logical_date": null, "conf": {nested(MAX_DEPTH - 1)}}}')
    assert edge.status == 200, edge.body
    over = api("POST", "/api/v2/dags/etl/dagRuns", raw_body=f'{{"logical_date": null, "conf": {nested(MAX_DEPTH)}}}')
    assert_too_deep(over, "body")


def test_brackets_inside_strings_do_not_count_as_nesting(api):
    answer = api("POST", "/api/v2/dags/etl/dagRuns", body={"logical_date": None, "conf": {"text": "[{" * 10_000}})
    assert answer.status == 200 and answer.body["conf"] == {"text": "[{" * 10_000}


def test_a_lone_surrogate_in_a_pool_name_is_422_naming_the_field(api, store):
    answer = api("POST", "/api/v2/pools", raw_body='{"name": "\\ud800", "slots": 1}')
    assert answer.status == 422
    assert answer.body["detail"] == [{"type": "string_unicode", "loc": ["body", "name"],
                                      "msg": "invalid Unicode: lone surrogate U+D800 at character 0",
                                      "input": "\\ud800"}]
    assert [p.name for p in store.list_pools()] == ["default_pool"]


@pytest.mark.parametrize(("method", "path", "raw", "loc"), [
    ("POST", "/api/v2/variables", '{"key": "k", "value": {"x": ["ok", "a\\udfffb"]}}', ["body", "value", "x", 1]),
    ("POST", "/api/v2/variables", '{"key": "k\\udc00", "value": "v"}', ["body", "key"]),
    ("POST", "/api/v2/dags/etl/dagRuns", '{"logical_date": null, "conf": {"\\ud834": 1}}', ["body", "conf", "\\ud834"]),
    ("POST", "/api/v2/connections", '{"connection_id": "c", "conn_type": "http", "password": "\\udbff"}',
     ["body", "password"]),
    ("PATCH", "/api/v2/variables", '{"actions": [{"action": "create", "entities": [{"key": "\\ud800", "value": 1}]}]}',
     ["body", "actions", 0, "entities", 0, "key"]),
])
def test_lone_surrogates_anywhere_in_a_body_are_422_at_their_place(api, method, path, raw, loc):
    answer = api(method, path, raw_body=raw)
    assert answer.status == 422, answer.body
    assert answer.body["detail"][0]["type"] == "string_unicode" and answer.body["detail"][0]["loc"] == loc


def test_a_valid_surrogate_pair_is_one_character_and_is_taken(api):
    answer = api("POST", "/api/v2/pools", raw_body='{"name": "p\\ud83d\\ude00", "slots": 1}')
    assert answer.status == 201 and answer.body["name"] == "p\U0001f600"


def test_a_500_kb_variable_value_is_400_saying_it_is_over_the_item_limit(api, store):
    answer = api("POST", "/api/v2/variables", body={"key": "big", "value": "v" * 500_000})
    assert answer.status == 400
    assert answer.body["detail"] == ("value too large: variable 'big' takes 488 KB stored, over the 400 KB DynamoDB "
                                     "holds in one item")
    assert store.get_variable("big") is None
    described = api("POST", "/api/v2/variables", body={"key": "d", "value": "v", "description": "d" * 500_000})
    assert described.status == 400 and "variable 'd'" in described.body["detail"]
    assert api("POST", "/api/v2/variables", body={"key": "fits", "value": "v" * 350_000}).status == 201


def test_a_variable_over_kms_s_limit_is_400_not_500(api, monkeypatch):
    monkeypatch.setenv("UPDRAFT_KMS_KEY", boto3.client("kms", region_name=REGION).create_key()["KeyMetadata"]["KeyId"])
    answer = api("POST", "/api/v2/variables", body={"key": "big", "value": "v" * 5000})
    assert answer.status == 400 and answer.body["detail"].startswith("value too large:")
    assert "4096 bytes (KMS's limit)" in answer.body["detail"]


@pytest.mark.parametrize("field", ["description", "host", "login", "schema", "password"])
def test_a_connection_over_the_item_limit_is_400(api, field):
    answer = api("POST", "/api/v2/connections", body={"connection_id": "c", "conn_type": "http",
                                                      field: "x" * 500_000})
    assert answer.status == 400 and "connection 'c'" in answer.body["detail"] and "400 KB" in answer.body["detail"]


def test_a_connection_extra_nested_too_deep_is_422_at_extra(api):
    answer = api("POST", "/api/v2/connections", body={"connection_id": "c", "conn_type": "http",
                                                      "extra": "[" * 100_000})
    assert_too_deep(answer, "body", "extra")


def test_stored_values_too_deep_to_mask_are_hidden_whole_not_a_500(api, store):
    """A variable or extra stored by other means than the API (a task's ``Variable.set``) may nest deeper than
    the API takes: the lists still answer, the value masked whole."""
    store.set_variable("deep", "[" * 5000 + "]" * 5000)
    store.put_connection(ConnectionRecord(conn_id="deep", conn_type="http", extra='{"a":' * 5000 + "1" + "}" * 5000))
    variables = api.get("/api/v2/variables")
    assert variables.status == 200 and variables.body["variables"][0]["value"] == "***"
    connections = api.get("/api/v2/connections")
    assert connections.status == 200 and connections.body["connections"][0]["extra"] == "***"


def test_an_asset_event_over_the_item_limit_is_400_and_its_partition_key_is_bounded(api, store):
    seed_assets(store)
    raw_id = asset_id_of("raw")
    big = api("POST", "/api/v2/assets/events", body={"asset_id": raw_id, "extra": {"x": "y" * 500_000}})
    assert big.status == 400 and "the event of asset 'raw'" in big.body["detail"]
    key = api("POST", "/api/v2/assets/events", body={"asset_id": raw_id, "partition_key": "p" * 500_000})
    assert key.status == 422 and key.body["detail"][0]["type"] == "string_too_long"
    run_key = api("POST", "/api/v2/dags/etl/dagRuns", body={"logical_date": None, "partition_key": "p" * 500_000})
    assert run_key.status == 422 and run_key.body["detail"][0]["loc"] == ["body", "partition_key"]


def test_an_integer_over_python_s_digit_limit_is_422_not_500(api):
    answer = api("POST", "/api/v2/pools", raw_body='{"name": "p", "slots": ' + "9" * 5000 + "}")
    assert answer.status == 422 and answer.body["detail"][0]["type"] == "json_invalid"

