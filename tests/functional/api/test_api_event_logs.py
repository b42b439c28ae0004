"""The audit log: changes made through the API are recorded once, masked, never failing the change, and served
as Airflow's event logs (``GET /eventLogs``, ``GET /eventLogs/{id}``)."""

from __future__ import annotations

import datetime as dt
import json
import logging

from tests.functional.lambda_helpers import lambda_context
from updraft.api.audit import entry_for
from updraft.api.openapi import airflow_document
from updraft.api.request import Request
from updraft.local.api_gateway import proxy_event
from updraft.secrets.masker import DEFAULT_SENSITIVE_FIELDS, mask_secret, redact, reset_masker


def _required(schema: str) -> set[str]:
    return set(airflow_document()["components"]["schemas"][schema]["required"])


def test_a_change_is_recorded_with_who_what_when_and_reads_are_not(api):
    before = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)
    assert api("PATCH", "/api/v2/dags/etl", body={"is_paused": True}).status == 200
    assert api("POST", "/api/v2/pools", body={"name": "etl_pool", "slots": 3, "description": "d"}).status == 201
    api.get("/api/v2/dags")  # a read: not recorded
    assert api("POST", "/api/v2/dags/~/dagRuns/list", body={}).status == 200  # a read with a body: not recorded
    api("PATCH", "/api/v2/dags/nope", body={"is_paused": True})  # failed (404): nothing changed, not recorded

    answer = api.get("/api/v2/eventLogs")
    assert answer.status == 200 and answer.body["total_entries"] == 2
    paused, pool = answer.body["event_logs"]
    assert _required("EventLogResponse") <= set(paused)
    assert (paused["event"], paused["dag_id"], paused["run_id"], paused["task_id"]) == ("patch_dag", "etl", None, None)
    assert paused["owner"].startswith("arn:aws:iam::123456789012:user/")  # the IAM caller API Gateway identified
    assert json.loads(paused["extra"]) == {"is_paused": True, "method": "PATCH"}
    assert dt.datetime.fromisoformat(paused["when"]) >= before
    assert pool["event"] == "post_pool" and json.loads(pool["extra"]) == {
        "name": "etl_pool", "slots": 3, "description": "d", "method": "POST"}
    assert api.get(f"/api/v2/eventLogs/{pool['event_log_id']}").body == pool


def test_the_list_filters_orders_and_pages_as_airflow_s(api):
    for dag_id in ("etl", "reporting", "etl"):
        api("PATCH", f"/api/v2/dags/{dag_id}", body={"is_paused": False})
    api("POST", "/api/v2/pools", body={"name": "p", "slots": 1})
    api("DELETE", "/api/v2/pools/p")

    def events(**query):
        return [(e["event"], e["dag_id"]) for e in api.get("/api/v2/eventLogs", query=query).body["event_logs"]]

    assert events(dag_id="etl") == [("patch_dag", "etl")] * 2
    assert events(event="delete_pool") == [("delete_pool", None)]
    assert events(included_events=["post_pool", "delete_pool"]) == [("post_pool", None), ("delete_pool", None)]
    assert len(events(excluded_events=["patch_dag"])) == 2
    assert events(dag_id_pattern="REPORT") == [("patch_dag", "reporting")]
    assert events(event_prefix_pattern="post_") == [("post_pool", None)]
    assert events(order_by="-id", limit=2) == [("delete_pool", None), ("post_pool", None)]
    assert events(offset=4) == [("delete_pool", None)]
    assert events(owner="nobody") == []
    everything = api.get("/api/v2/eventLogs").body["event_logs"]
    middle = everything[2]["when"]
    later = api.get("/api/v2/eventLogs", query={"after": middle}).body["event_logs"]
    # compared as instants: ISO text without a fraction ("...:01Z") sorts after "...:01.5Z" as a string
    assert all(dt.datetime.fromisoformat(e["when"]) > dt.datetime.fromisoformat(middle) for e in later)
    assert api.get("/api/v2/eventLogs", query={"before": "2000-01-01T00:00:00"}).body["total_entries"] == 0
    assert api.get("/api/v2/eventLogs", query={"order_by": "nope"}).status == 400
    assert api.get("/api/v2/eventLogs", query={"after": "yesterday"}).status == 422


def test_an_unknown_id_is_airflow_s_404(api):
    assert api.get("/api/v2/eventLogs/12345").status == 404
    assert api.get("/api/v2/eventLogs/99999999999999999999999").status == 404
    assert api.get("/api/v2/eventLogs/abc").status == 422


def test_a_request_delivered_twice_is_recorded_once(api):
    event = proxy_event("PATCH", "/api/v2/dags/etl", {"Content-Type": "application/json"}, b'{"is_paused": true}')
    for _ in range(2):
        assert api.handler.handler(event, lambda_context("api"))["statusCode"] == 200
    assert api.get("/api/v2/eventLogs").body["total_entries"] == 1


def test_a_failed_record_never_fails_the_change(api, store, monkeypatch, caplog):
    def boom(*_args, **_kwargs):
        raise RuntimeError("the table is on fire")

    monkeypatch.setattr("updraft.store.dynamo.DynamoStore.put_event_log", boom)
    with caplog.at_level(logging.ERROR):
        assert api("PATCH", "/api/v2/dags/etl", body={"is_paused": True}).status == 200
    assert store.get_dag_meta("etl").is_paused
    assert "was not recorded" in caplog.text and "the table is on fire" in caplog.text


NOW = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)


def _request(path: str, body: dict, query: dict | None = None, **path_params: str) -> Request:
    return Request(method="POST", path=path, path_params=path_params,
                   query={k: [v] for k, v in (query or {}).items()}, body=json.dumps(body),
                   headers={"content-type": "application/json"})


def test_sensitive_values_are_masked_as_airflow_masks_them():
    entry = entry_for(_request("/api/v2/dags/etl/dagRuns", {
        "dag_run_id": "r1", "conf": {"db_password": "hunter2", "rows": 3, "nested": {"api_key": ["k1", "k2"]}}},
        dag_id="etl"), "trigger_dag_run", NOW)
    assert (entry.dag_id, entry.run_id, entry.event, entry.when) == ("etl", "r1", "trigger_dag_run", NOW)
    assert json.loads(entry.extra) == {"dag_run_id": "r1", "method": "POST", "conf": {
        "db_password": "***", "rows": 3, "nested": {"api_key": ["***", "***"]}}}
    variable = entry_for(_request("/api/v2/variables", {"key": "plain", "value": "s3cret"}), "post_variable", NOW)
    assert json.loads(variable.extra) == {"key": "plain", "value": "***", "method": "POST"}
    connection = entry_for(_request("/api/v2/connections", {
        "connection_id": "db", "password": "pw", "extra": '{"region": "eu", "token": "t"}'}), "post_connection", NOW)
    assert json.loads(connection.extra) == {"connection_id": "db", "password": "***", "method": "POST",
                                            "extra": {"region": "***", "token": "***"}}
    bulk = entry_for(_request("/api/v2/variables", {"actions": [
        {"action": "create", "entities": [{"key": "a", "value": "v"}]}]}), "bulk_variables", NOW)
    assert json.loads(bulk.extra)["actions"][0]["entities"] == [{"key": "a", "value": "***"}]


def test_the_audit_hides_exactly_what_the_secrets_masker_hides(monkeypatch):
    """One rule decides what is hidden: every default sensitive word, a word added by Airflow's
    ``[core] sensitive_var_conn_names``, and a secret registered with ``mask_secret`` are hidden in the entry as the
    masker hides them (the audit kept its own word list, which the setting never reached)."""
    monkeypatch.setenv("AIRFLOW__CORE__SENSITIVE_VAR_CONN_NAMES", "iban")
    conf = {"customer_iban": "DE89370400440532013000", "note": "paid with tok-9f8e7d6c", "rows": 3,
            "api_key_id": 42, **{f"my_{word}": f"value of {word}" for word in DEFAULT_SENSITIVE_FIELDS}}
    mask_secret("tok-9f8e7d6c")
    try:
        entry = entry_for(_request("/api/v2/dags/etl/dagRuns", {"dag_run_id": "r1", "conf": conf}, dag_id="etl"),
                          "trigger_dag_run", NOW)
        masked = redact(conf)
    finally:
        reset_masker()
    logged = json.loads(entry.extra)["conf"]
    assert logged == masked
    assert (logged["customer_iban"], logged["note"], logged["rows"]) == ("***", "paid with ***", 3)
    assert {logged[f"my_{word}"] for word in DEFAULT_SENSITIVE_FIELDS} == {"***"}


def test_a_dry_run_clear_changes_nothing_and_is_not_recorded():
    path = "/api/v2/dags/etl/clearTaskInstances"
    assert entry_for(_request(path, {"dry_run": True}, dag_id="etl"), "post_clear_task_instances", NOW) is None
    assert entry_for(_request(path, {}, dag_id="etl"), "post_clear_task_instances", NOW) is None
    assert entry_for(_request(path, {"dry_run": False}, dag_id="etl"), "post_clear_task_instances", NOW) is not None
