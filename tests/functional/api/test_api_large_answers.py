"""No answer of the API is larger than API Gateway and Lambda pass (issue 34): a 50 MB XCom answered a 52 MB body.

A try's long log comes in pages under the limit that a client following the continuation token reads whole; a
large XCom's value is refused with a 413 saying so and linking to the value where it is in S3; any other answer
over the limit is a 413 too. Each answer is measured as the Lambda carries it (``answer_size.carried_size``).
"""

from __future__ import annotations

import base64
import datetime as dt
import gzip
import json
import os
import urllib.parse

import boto3
import pytest
import requests
from aws_lambda_powertools.event_handler import Response

from tests.functional.api.conftest import BUCKET, REGION
from tests.functional.lambda_helpers import lambda_context
from updraft.api.answer_size import MAX_ANSWER_BYTES, text_carried_size
from updraft.local.api_gateway import proxy_event
from updraft.model.records import TIKey
from updraft.model.states import TaskInstanceState
from updraft.runtime.logs import S3LogSink
from updraft.store.config import StoreConfig
from updraft.store.dynamo import DynamoStore

ENDED = dt.datetime(2024, 3, 1, 0, 5, tzinfo=dt.UTC)
ENTRY = "/api/v2/dags/etl/dagRuns/r1/taskInstances/extract/xcomEntries/"


def _finished_try(api, store) -> TIKey:
    api("POST", "/api/v2/dags/etl/dagRuns", body={"dag_run_id": "r1", "logical_date": "2024-02-01T00:00:00Z"})
    key = TIKey("etl", "r1", "extract")
    store.transition_ti(key, expected=[None], state=TaskInstanceState.SUCCESS,
                        fields={"try_number": 1, "end_date": ENDED})
    return key


def _carried(answer) -> int:
    return text_carried_size(json.dumps(answer.body))


@pytest.mark.slow
def test_a_long_log_comes_in_pages_under_the_limit_that_give_it_back_whole(api, store):
    key = _finished_try(api, store)
    lines = [f"line {n} " + "é\"x" * 40 for n in range(80_000)]  # ~11 MB once escaped twice
    lines.append("y" * 600_000)  # one line longer than a message: cut into messages
    S3LogSink(boto3.client("s3", region_name=REGION), BUCKET).write(key, 1, "\n".join(lines) + "\n")
    path = "/api/v2/dags/etl/dagRuns/r1/taskInstances/extract/logs/1"
    events, token, pages = [], None, 0
    while True:
        answer = api.get(path, query={"full_content": "true", **({"token": token} if token else {})})
        assert answer.status == 200 and _carried(answer) <= MAX_ANSWER_BYTES
        events += [m["event"] for m in answer.body["content"]]
        pages += 1
        token = answer.body["continuation_token"]
        if token is None:
            break
    assert pages >= 3
    assert events[:-3] == lines[:-1] and "".join(events[-3:]) == lines[-1]
    event = proxy_event("GET", path, {"Accept": "application/x-ndjson"}, b"")
    streamed = api.handler.handler(event, lambda_context("api"))
    assert streamed["statusCode"] == 200 and text_carried_size(streamed["body"]) <= MAX_ANSWER_BYTES
    assert streamed["multiValueHeaders"]["Airflow-Continuation-Token"]  # Airflow's header: there is more


def _xcom_answers(api, xcom_key: str) -> list:
    return [api.get(ENTRY + xcom_key, query=query) for query in (
        {}, {"deserialize": "true"}, {"stringify": "true"}, {"deserialize": "true", "stringify": "false"})]


def test_a_large_xcom_in_s3_is_refused_under_the_limit_with_a_link_to_its_value(api, store):
    key = _finished_try(api, store)
    s3 = boto3.client("s3", region_name=REGION)
    with_s3 = DynamoStore(StoreConfig(table_name=store.config.table_name, region=REGION, s3_bucket=BUCKET),
                          s3_client=s3)
    value = {"rows": [base64.b64encode(os.urandom(3000)).decode() for _ in range(3000)]}  # 12 MB, incompressible
    with_s3.put_xcom(key, "big", value, now=ENDED)
    for answer in _xcom_answers(api, "big"):
        assert answer.status == 413 and _carried(answer) <= MAX_ANSWER_BYTES
        detail = answer.body["detail"]
        assert detail["reason"] == "xcom_value_too_large" and detail["max_bytes"] == MAX_ANSWER_BYTES
        assert "larger than the API can answer" in detail["message"]
    assert "Signature=" in urllib.parse.urlparse(detail["download_url"]).query
    downloaded = requests.get(detail["download_url"], timeout=30)  # moto answers it
    assert downloaded.status_code == 200
    assert json.loads(gzip.decompress(downloaded.content) if downloaded.content[:2] == b"\x1f\x8b"
                      else downloaded.content) == {"v": value}
    listed = api.get("/api/v2/dags/etl/dagRuns/r1/taskInstances/extract/xcomEntries")
    assert listed.status == 200 and [e["key"] for e in listed.body["xcom_entries"]] == ["big"]


def test_a_large_xcom_held_inline_is_refused_without_being_unpacked_whole(api, store):
    """50 MB of one letter compresses into the item itself: no object to link to, and a small item's value may be
    a thousand times larger than the item, so it is never decompressed past the limit."""
    key = _finished_try(api, store)
    store.put_xcom(key, "repetitive", "x" * 50_000_000, now=ENDED)
    store.put_xcom(key, "quotes", ['"'] * 1_200_000, now=ENDED)  # 6 MB of JSON, twice that once carried
    store.put_xcom(key, "small", {"rows": 3}, now=ENDED)
    for xcom_key in ("repetitive", "quotes"):
        for answer in _xcom_answers(api, xcom_key):
            assert answer.status == 413 and _carried(answer) <= MAX_ANSWER_BYTES
            assert answer.body["detail"]["download_url"] is None
            assert "a task can pull it" in answer.body["detail"]["message"]
    assert api.get(ENTRY + "small").body["value"] == {"rows": 3}


def test_any_other_answer_over_the_limit_is_a_413(monkeypatch):
    from updraft.api.app import _sendable

    small = Response(status_code=200, content_type="application/json", body=json.dumps({"a": 1}))
    assert _sendable(small) is small
    big = Response(status_code=200, content_type="application/json", body=json.dumps(['"'] * 1_500_000))
    refused = _sendable(big)
    assert refused.status_code == 413 and "more than the API can send" in json.loads(refused.body)["detail"]
