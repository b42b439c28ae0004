"""XCom-entry and log routes on moto: entries (also ``~``), one value (native or string), a try's log as JSON and
NDJSON."""

from __future__ import annotations

import datetime as dt
import json

import boto3

from tests.functional.api.conftest import BUCKET, REGION
from tests.functional.lambda_helpers import lambda_context
from updraft.local.api_gateway import proxy_event
from updraft.model.records import TIKey
from updraft.model.states import TaskInstanceState
from updraft.runtime.logs import S3LogSink

ENDED = dt.datetime(2024, 3, 1, 0, 5, tzinfo=dt.UTC)


def _run_with_outputs(api, store):
    api("POST", "/api/v2/dags/etl/dagRuns", body={"dag_run_id": "r1", "logical_date": "2024-02-01T00:00:00Z"})
    key = TIKey("etl", "r1", "extract")
    store.transition_ti(key, expected=[None], state=TaskInstanceState.SUCCESS,
                        fields={"try_number": 1, "end_date": ENDED})
    store.put_xcom(key, "return_value", {"rows": 3}, now=ENDED)
    store.put_xcom(key, "path", "s3://b/k", now=ENDED)
    S3LogSink(boto3.client("s3", region_name=REGION), BUCKET).write(key, 1, "starting\nloaded 3 rows\n")
    return key


def test_xcom_entries_list_without_values_and_get_one(api, store):
    _run_with_outputs(api, store)
    listed = api.get("/api/v2/dags/etl/dagRuns/r1/taskInstances/extract/xcomEntries")
    assert listed.status == 200 and listed.body["total_entries"] == 2
    assert [e["key"] for e in listed.body["xcom_entries"]] == ["path", "return_value"]
    entry = listed.body["xcom_entries"][1]
    assert "value" not in entry
    assert {k: entry[k] for k in ("dag_id", "run_id", "task_id", "map_index", "timestamp", "logical_date")} == {
        "dag_id": "etl", "run_id": "r1", "task_id": "extract", "map_index": -1, "timestamp": "2024-03-01T00:05:00Z",
        "logical_date": "2024-02-01T00:00:00Z"}
    assert api.get("/api/v2/dags/~/dagRuns/~/taskInstances/~/xcomEntries", query={"xcom_key": "path"}
                   ).body["total_entries"] == 1
    one = api.get("/api/v2/dags/etl/dagRuns/r1/taskInstances/extract/xcomEntries/return_value")
    assert one.status == 200 and one.body["value"] == {"rows": 3}
    as_text = api.get("/api/v2/dags/etl/dagRuns/r1/taskInstances/extract/xcomEntries/return_value",
                      query={"stringify": "true"})
    assert as_text.body["value"] == "{'rows': 3}"
    assert api.get("/api/v2/dags/etl/dagRuns/r1/taskInstances/extract/xcomEntries/nope").status == 404
    # A fixed segment wins over a map index: xcomEntries is never read as one.
    assert api.get("/api/v2/dags/etl/dagRuns/r1/taskInstances/load/xcomEntries").body == {
        "xcom_entries": [], "total_entries": 0}


def test_a_tagged_value_is_answered_as_stored_and_deserialized_as_airflow_shows_it(api, store):
    """Airflow answers serde's stored form by default; with ``deserialize`` its readable form (``stringify``)."""
    key = _run_with_outputs(api, store)
    tagged = {"rows": {"__classname__": "builtins.tuple", "__version__": 1, "__data__": [1, "a"]},
              "when": {"__classname__": "datetime.date", "__version__": 1, "__data__": "2024-02-01"}}
    store.put_xcom(key, "shapes", tagged, now=ENDED)
    path = "/api/v2/dags/etl/dagRuns/r1/taskInstances/extract/xcomEntries/shapes"
    assert api.get(path).body["value"] == tagged
    assert api.get(path, query={"deserialize": "true"}).body["value"] == {
        "rows": "(1,a)", "when": "datetime.date@version=1(2024-02-01)"}
    assert api.get(path, query={"deserialize": "true", "stringify": "true"}).body["value"] == (
        "{'rows': '(1,a)', 'when': 'datetime.date@version=1(2024-02-01)'}")


def test_an_xcom_is_shown_as_its_try_masked_it_and_read_whole(api, store):
    """The worker stores a pushed value's masked form beside it (``shown``); the API shows that one, while
    downstream tasks read the value itself."""
    key = _run_with_outputs(api, store)
    store.put_xcom(key, "login", {"user": "ana", "password": "hunter22"}, now=ENDED,
                   shown={"user": "ana", "password": "***"})
    one = api.get("/api/v2/dags/etl/dagRuns/r1/taskInstances/extract/xcomEntries/login")
    assert one.status == 200 and one.body["value"] == {"user": "ana", "password": "***"}
    assert store.get_xcom(key, "login") == {"user": "ana", "password": "hunter22"}
    assert store.list_xcoms("etl", "r1", "extract")[(-1, "login")]["password"] == "hunter22"
    unmasked = api.get("/api/v2/dags/etl/dagRuns/r1/taskInstances/extract/xcomEntries/return_value")
    assert unmasked.body["value"] == {"rows": 3}  # nothing to mask: stored once


def test_a_try_s_log_as_json_and_ndjson(api, store):
    _run_with_outputs(api, store)
    path = "/api/v2/dags/etl/dagRuns/r1/taskInstances/extract/logs/1"
    answer = api.get(path, query={"full_content": "true", "map_index": -1})
    assert answer.status == 200
    assert answer.body == {"content": [{"timestamp": None, "event": "starting"},
                                       {"timestamp": None, "event": "loaded 3 rows"}],
                           "continuation_token": None}
    missing = api.get("/api/v2/dags/etl/dagRuns/r1/taskInstances/extract/logs/2")
    assert missing.status == 200 and missing.body["content"][0]["event"] == "No log for try 2 of extract"
    untouched = api.get("/api/v2/dags/etl/dagRuns/r1/taskInstances/load/logs/1")
    assert untouched.body["content"] == [{"timestamp": None, "event": "load has not started a try yet"}]
    assert api.get("/api/v2/dags/etl/dagRuns/r1/taskInstances/nope/logs/1").status == 404
    assert api.get("/api/v2/dags/etl/dagRuns/r1/taskInstances/extract/logs/one").status == 422


def test_a_running_try_s_log_is_followed_with_the_continuation_token(api, store):
    api("POST", "/api/v2/dags/etl/dagRuns", body={"dag_run_id": "r2", "logical_date": "2024-02-02T00:00:00Z"})
    key = TIKey("etl", "r2", "extract")
    store.transition_ti(key, expected=[None], state=TaskInstanceState.RUNNING, fields={"try_number": 1})
    path = "/api/v2/dags/etl/dagRuns/r2/taskInstances/extract/logs/1"
    nothing = api.get(path).body
    assert "it has written nothing yet" in nothing["content"][0]["event"] and nothing["continuation_token"]
    sink = S3LogSink(boto3.client("s3", region_name=REGION), BUCKET)
    sink.write(key, 1, "starting\nloading\n")  # the worker's live write
    first = api.get(path).body
    assert [m["event"] for m in first["content"]] == ["starting", "loading"] and first["continuation_token"]
    sink.write(key, 1, "starting\nloading\nloaded 3 rows\n")
    more = api.get(path, query={"token": first["continuation_token"]}).body
    assert [m["event"] for m in more["content"]] == ["loaded 3 rows"]
    assert api.get(path, query={"token": more["continuation_token"]}).body["content"] == []
    assert len(api.get(path, query={"token": first["continuation_token"], "full_content": "true"}
                       ).body["content"]) == 3
    assert api.get(path, query={"token": "not-ours"}).status == 400
    store.transition_ti(key, expected=[TaskInstanceState.RUNNING], state=TaskInstanceState.SUCCESS)
    assert api.get(path).body["continuation_token"] is None  # a finished try's log is complete


def test_ndjson_is_one_message_a_line(api, store):
    _run_with_outputs(api, store)
    event = proxy_event("GET", "/api/v2/dags/etl/dagRuns/r1/taskInstances/extract/logs/1",
                        {"Accept": "application/x-ndjson"}, b"")
    response = api.handler.handler(event, lambda_context("api"))
    assert response["multiValueHeaders"]["Content-Type"] == ["application/x-ndjson"]
    lines = response["body"].splitlines()
    assert [json.loads(line)["event"] for line in lines] == ["starting", "loaded 3 rows"]


def test_extra_links_give_each_try_s_cloudwatch_stream_on_aws(api, store, monkeypatch):
    """Airflow's ``links`` route: on AWS (task logs in CloudWatch) the try's log stream in the console; in local
    mode (logs in the bucket) none."""
    _run_with_outputs(api, store)
    links = "/api/v2/dags/etl/dagRuns/r1/taskInstances/extract/links"
    assert api.get(links).body == {"extra_links": {}, "total_entries": 0}
    monkeypatch.setenv("UPDRAFT_TASK_LOG_GROUP", "/updraft/dev/tasks")
    monkeypatch.setattr("updraft.services._shared", None)
    [url] = api.get(links).body["extra_links"].values()
    assert url == ("https://us-east-1.console.aws.amazon.com/cloudwatch/home?region=us-east-1#logsV2:log-groups/"
                   "log-group/$252Fupdraft$252Fdev$252Ftasks/log-events/etl$252Fr1$252Fextract$252F-1$252F1")
    assert api.get(links, query={"try_number": "0"}).body == {"extra_links": {"CloudWatch Logs": None},
                                                              "total_entries": 1}
    assert api.get("/api/v2/dags/etl/dagRuns/r1/taskInstances/nope/links").status == 404
    external = api.get("/api/v2/dags/etl/dagRuns/r1/taskInstances/extract/externalLogUrl/1")
    assert external.status == 200 and external.body == {"url": url}
    monkeypatch.delenv("UPDRAFT_TASK_LOG_GROUP")
    monkeypatch.setattr("updraft.services._shared", None)
    local = api.get("/api/v2/dags/etl/dagRuns/r1/taskInstances/extract/externalLogUrl/1")
    assert (local.status, local.body) == (400, {"detail": "Task log handler does not support external logs."})


XCOMS = "/api/v2/dags/etl/dagRuns/r1/taskInstances/extract/xcomEntries"


def test_a_user_adds_edits_and_deletes_an_xcom_entry_as_airflow_3s_ui_does(api, store):
    key = _run_with_outputs(api, store)
    made = api("POST", XCOMS, body={"key": "threshold", "value": {"max": 5, "tags": ["a", "b"]}})
    assert made.status == 201 and made.body["key"] == "threshold" and made.body["value"] == {"max": 5,
                                                                                             "tags": ["a", "b"]}
    assert {k: made.body[k] for k in ("dag_id", "run_id", "task_id", "map_index")} == {
        "dag_id": "etl", "run_id": "r1", "task_id": "extract", "map_index": -1}
    assert store.get_xcom(key, "threshold") == {"max": 5, "tags": ["a", "b"]}  # what a task pulls
    again = api("POST", XCOMS, body={"key": "threshold", "value": 1})
    assert again.status == 409 and "already exists" in again.body["detail"]

    edited = api("PATCH", f"{XCOMS}/threshold", body={"value": [1, 2]})
    assert edited.status == 200 and edited.body["value"] == [1, 2] and store.get_xcom(key, "threshold") == [1, 2]
    assert api("PATCH", f"{XCOMS}/nope", body={"value": 1}).status == 404
    # A secret under a sensitive key is stored for tasks and shown masked, as a task's pushed value is.
    api("PATCH", f"{XCOMS}/threshold", body={"value": {"password": "hunter2"}})
    assert store.get_xcom(key, "threshold") == {"password": "hunter2"}
    assert api.get(f"{XCOMS}/threshold").body["value"] == {"password": "***"}

    assert api("DELETE", f"{XCOMS}/threshold").status == 204
    assert store.get_xcom(key, "threshold") is None
    assert api("DELETE", f"{XCOMS}/threshold").status == 404
    assert api("DELETE", f"{XCOMS}/return_value", query={"map_index": "-2"}).status == 422  # Airflow's ge=-1
    audit = [e["event"] for e in api.get("/api/v2/eventLogs", query={"dag_id": "etl"}).body["event_logs"]]
    assert {"create_xcom_entry", "update_xcom_entry", "delete_xcom_entry"} <= set(audit)


def test_an_xcom_entry_is_refused_as_airflow_refuses_it(api, store):
    _run_with_outputs(api, store)
    # A key serde reads as a tag, at any depth or in a JSON string: a client's value never reads back as a tuple.
    for value in ({"__classname__": "builtins.tuple", "__version__": 1, "__data__": [1]}, [{"x": {"__var": 1}}],
                  '{"__type": "set"}'):
        refused = api("POST", XCOMS, body={"key": "k", "value": value})
        assert refused.status == 422 and "reserved serialization keys" in refused.body["detail"][0]["msg"], value
    assert api("POST", XCOMS, body={"key": "k", "value": 1, "extra": 1}).status == 422  # a strict body
    assert api("POST", XCOMS, body={"key": "k"}).status == 422  # value is required (null is a value)
    assert api("POST", XCOMS, body={"key": "k", "value": None}).status == 201
    missing_task = api("POST", "/api/v2/dags/etl/dagRuns/r1/taskInstances/nope/xcomEntries", body={"key": "k",
                                                                                                  "value": 1})
    assert missing_task.status == 404 and missing_task.body["detail"] == "Task with ID: `nope` not found in dag: `etl`"
    missing_run = api("POST", "/api/v2/dags/etl/dagRuns/r9/taskInstances/extract/xcomEntries", body={"key": "k",
                                                                                                    "value": 1})
    assert missing_run.status == 404 and missing_run.body["detail"] == "Dag Run with ID: `r9` not found for dag: `etl`"
    assert api("POST", XCOMS, body={"key": "k2", "value": 1, "map_index": 3}).status == 404  # no such instance
