"""Local mode's API Gateway builds the REST proxy event the deployed API Gateway sends."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest

from updraft.local.api_gateway import proxy_event

SAMPLE = json.loads((Path(__file__).resolve().parents[3] / "events" / "api" / "health.json").read_text())


def test_the_event_has_the_sample_events_shape_and_the_request():
    event = proxy_event("POST", "/api/v2/dags/x/dagRuns?limit=5&tag=a&tag=b", {"Accept": "application/json"},
                        b'{"conf": {}}')
    assert set(SAMPLE) <= set(event)
    assert set(SAMPLE["requestContext"]) & set(event["requestContext"]) >= {"httpMethod", "path", "stage",
                                                                            "identity", "requestId"}
    assert (event["httpMethod"], event["path"], event["resource"]) == ("POST", "/api/v2/dags/x/dagRuns",
                                                                       "/{proxy+}")
    assert event["pathParameters"] == {"proxy": "api/v2/dags/x/dagRuns"}
    assert event["queryStringParameters"] == {"limit": "5", "tag": "b"}
    assert event["multiValueQueryStringParameters"] == {"limit": ["5"], "tag": ["a", "b"]}
    assert json.loads(event["body"]) == {"conf": {}} and event["isBase64Encoded"] is False


def test_a_request_without_query_or_body_has_nulls_as_api_gateway_sends():
    event = proxy_event("GET", "/api/v2/monitor/health", {}, b"")
    assert event["queryStringParameters"] is None and event["multiValueQueryStringParameters"] is None
    assert event["body"] is None


# -- framing: what the gateway answers a request whose body it cannot read as sent (raw sockets) --------------

def _echo(event):
    return {"statusCode": 200, "body": json.dumps({"body": event["body"]}),
            "headers": {"Content-Type": "application/json"}}


# Long enough that an answer given at once is told from one given at the timeout on a loaded machine.
READ_TIMEOUT_S = 3.0


@pytest.fixture
def gateway():
    from updraft.local.api_gateway import LocalApiGateway

    served = LocalApiGateway(_echo, read_timeout=READ_TIMEOUT_S)
    yield served
    served.close()


def _send(gateway, raw: bytes, *, wait: float = 10.0) -> tuple[int, dict, float]:
    """Status, JSON body and seconds taken for one request sent as ``raw`` bytes."""
    host, port = gateway.url.removeprefix("http://").split(":")
    started = time.monotonic()
    with socket.create_connection((host, int(port)), timeout=wait) as conn:
        conn.sendall(raw)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body or b"null"), time.monotonic() - started


def _post(length_headers: str, body: bytes = b"") -> bytes:
    return (f"POST /api/v2/pools HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n{length_headers}"
            "\r\n").encode() + body


@pytest.mark.parametrize("length", ["abc", "-1", "1e3", "+5", "0x10", "5, 6"])
def test_a_content_length_that_is_not_a_number_is_400_at_once(gateway, length):
    status, body, took = _send(gateway, _post(f"Content-Length: {length}\r\n", b"{}"))
    assert status == 400 and "Content-Length" in body["detail"]
    assert took < READ_TIMEOUT_S - 0.5  # answered, not waiting for the read timeout


def test_two_content_lengths_that_disagree_are_400(gateway):
    status, body, _ = _send(gateway, _post("Content-Length: 2\r\nContent-Length: 3\r\n", b"{} "))
    assert status == 400 and "Content-Length" in body["detail"]


def test_a_body_over_api_gateway_s_10_mb_is_413_without_reading_it(gateway):
    status, body, took = _send(gateway, _post(f"Content-Length: {10 * 1024 * 1024 + 1}\r\n", b"{"))
    assert status == 413 and "10485760" in body["detail"] and took < READ_TIMEOUT_S - 0.5


def test_a_chunked_body_without_a_length_is_411(gateway):
    status, body, _ = _send(gateway, _post("Transfer-Encoding: chunked\r\n", b"2\r\n{}\r\n0\r\n\r\n"))
    assert status == 411 and "Length Required" in body["detail"]


def test_a_body_that_is_not_utf_8_is_400_naming_the_byte(gateway):
    status, body, _ = _send(gateway, _post("Content-Length: 4\r\n", b'"\xff\xfe"'))
    assert status == 400 and "UTF-8 (byte 1)" in body["detail"]


@pytest.mark.slow
def test_a_body_shorter_than_its_length_frees_the_thread_after_the_read_timeout(gateway):
    status, body, took = _send(gateway, _post("Content-Length: 100\r\n", b'{"name"'))
    assert status == 408 and "Request Timeout" in body["detail"]
    assert READ_TIMEOUT_S - 0.1 < took < READ_TIMEOUT_S + 10


def test_well_framed_requests_still_reach_the_function(gateway):
    assert _send(gateway, _post("Content-Length: 2\r\n", b"{}"))[:2] == (200, {"body": "{}"})
    assert _send(gateway, _post("", b""))[:2] == (200, {"body": None})  # no length, no encoding: empty body
    assert _send(gateway, b"GET /api/v2/pools HTTP/1.1\r\nHost: x\r\n\r\n")[:2] == (200, {"body": None})


def test_a_failed_function_is_502_and_its_traceback_is_logged(caplog):
    """As API Gateway answers a Lambda that raised, and as the function's log would show why."""
    from updraft.local.api_gateway import LocalApiGateway

    def failing(event):
        raise RuntimeError("the store went away")

    served = LocalApiGateway(failing)
    try:
        with caplog.at_level("ERROR", logger="updraft.local.api_gateway"):
            status, body, _ = _send(served, b"GET /api/v2/pools HTTP/1.1\r\nHost: x\r\n\r\n")
    finally:
        served.close()
    assert (status, body) == (502, {"message": "Internal server error: RuntimeError"})
    assert "GET /api/v2/pools" in caplog.text and "the store went away" in caplog.text
