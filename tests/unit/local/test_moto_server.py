"""The embedded AWS hands DynamoDB's requests straight to moto's DynamoDB handler (``moto_server.dynamodb_direct``):
the answers are byte for byte those moto's own server gives through its Flask app, errors included."""

from __future__ import annotations

import http.client
import io
import json
import socket
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from werkzeug.test import Client

from updraft.local.moto_server import EmbeddedAwsServer, dynamodb_direct

TABLE = "direct-table"


class _Headers(dict):
    def get_all(self, name: str, default: Any = None) -> Any:  # what urllib3's response headers offer
        return [self[name]] if name in self else default


def _prepared(call: str, **params: Any) -> tuple[str, dict[str, str], bytes]:
    """A DynamoDB request as botocore signs and sends it (path, headers, body), captured before it is sent."""
    client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url="http://127.0.0.1:9",
                          aws_access_key_id="AKIDIRECT", aws_secret_access_key="secret")
    captured: dict[str, Any] = {}

    def capture(request: Any, **_: Any) -> AWSResponse:
        captured.update(headers={k: v.decode() if isinstance(v, bytes) else v for k, v in request.headers.items()},
                        body=request.body if isinstance(request.body, bytes) else request.body.encode())
        raw = type("Raw", (), {"stream": lambda self, *a, **k: iter([b"{}"])})()
        return AWSResponse(request.url, 200, _Headers(), raw)

    client.meta.events.register("before-send", capture)
    getattr(client, call)(**params)
    return "/", captured["headers"], captured["body"]


@pytest.fixture
def apps() -> Iterator[tuple[Client, Client]]:
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app

    with EmbeddedAwsServer() as server:  # moto's state is the process's: both apps see the same tables
        server.reset()
        moto_own = DomainDispatcherApplication(create_backend_app)
        yield Client(dynamodb_direct(moto_own)), Client(moto_own)


def _send(client: Client, call: str, **params: Any) -> tuple[int, dict[str, Any], str | None]:
    path, headers, body = _prepared(call, **params)
    response = client.post(path, headers=headers, data=body)
    return response.status_code, json.loads(response.get_data() or b"{}"), response.headers.get("Content-Type")


def test_answers_equal_moto_s_own_server(apps) -> None:
    direct, moto_own = apps
    key = {"pk": {"S": "a"}, "sk": {"S": "1"}}
    steps: list[tuple[str, dict[str, Any]]] = [
        ("create_table", {"TableName": TABLE, "BillingMode": "PAY_PER_REQUEST",
                          "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                        {"AttributeName": "sk", "KeyType": "RANGE"}],
                          "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                                   {"AttributeName": "sk", "AttributeType": "S"}]}),
        ("put_item", {"TableName": TABLE, "Item": {**key, "n": {"N": "1"}, "b": {"B": b"\x00\x01"}}}),
        ("get_item", {"TableName": TABLE, "Key": key}),
        ("put_item", {"TableName": TABLE, "Item": key, "ConditionExpression": "attribute_not_exists(pk)",
                      "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}),
        ("transact_write_items", {"TransactItems": [{"ConditionCheck": {
            "TableName": TABLE, "Key": key, "ConditionExpression": "n = :two",
            "ExpressionAttributeValues": {":two": {"N": "2"}}}}]}),
        ("update_item", {"TableName": TABLE, "Key": key, "UpdateExpression": "SET pk = :x",
                         "ExpressionAttributeValues": {":x": {"S": "b"}}}),
        ("get_item", {"TableName": "no-such-table", "Key": key}),
        ("delete_table", {"TableName": TABLE}),
    ]
    for client in (direct, moto_own):  # the same steps, the table made and removed by each
        answers = [_send(client, call, **params) for call, params in steps]
        if client is direct:
            first = answers
    for (call, _), mine, theirs in zip(steps, first, answers, strict=True):
        if call not in ("create_table", "delete_table"):  # they carry the table's creation time
            assert mine == theirs, call
    statuses = [status for status, _, _ in first]
    assert statuses == [200, 200, 200, 400, 400, 400, 400, 200]
    assert first[2][1]["Item"]["b"] == {"B": "AAE="}
    assert first[3][1]["__type"].endswith("ConditionalCheckFailedException") and first[3][1]["Item"]["n"] == {"N": "1"}
    assert first[4][1]["CancellationReasons"][0]["Code"] == "ConditionalCheckFailed"
    assert first[6][1]["__type"].endswith("ResourceNotFoundException")


def test_other_services_go_to_moto_s_own_app(apps) -> None:
    direct, _ = apps
    response = direct.get("/moto-api/data.json")
    assert response.status_code == 200 and "dynamodb" in json.loads(response.get_data())


def test_requests_reuse_the_serving_threads_and_a_stop_ends_them() -> None:
    import threading
    import time

    def serving() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name == "embedded-aws-request"]

    before = set(serving())
    with EmbeddedAwsServer() as server:
        client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=server.url,
                              aws_access_key_id="AKIDIRECT", aws_secret_access_key="secret")
        for _ in range(100):  # one after another: each is a connection of its own, the threads stay for the next
            client.list_tables()
        mine = [t for t in serving() if t not in before]
        # A thread is started only when none is idle: one that answered and is still closing its connection is
        # not yet idle when the next request comes, so a loaded machine starts a few.
        assert 1 <= len(mine) <= 10
    deadline = time.monotonic() + 5
    while any(t.is_alive() for t in mine) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not any(t.is_alive() for t in mine)


def _raw(server: EmbeddedAwsServer) -> http.client.HTTPConnection:
    return http.client.HTTPConnection(server.host, server.port, timeout=10)


def _list_tables(connection: http.client.HTTPConnection, headers: dict[str, str] | None = None) -> Any:
    connection.request("POST", "/", body=b"{}", headers={
        "X-Amz-Target": "DynamoDB_20120810.ListTables", "Content-Type": "application/x-amz-json-1.0",
        "Authorization": "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/dynamodb/aws4_request, "
                         "SignedHeaders=host, Signature=0", **(headers or {})})
    response = connection.getresponse()
    response.read()
    return response


def test_one_connection_serves_request_after_request() -> None:
    with EmbeddedAwsServer() as server:
        connection = _raw(server)
        first = _list_tables(connection)
        sock = connection.sock
        answers = [_list_tables(connection) for _ in range(5)]
        assert sock is not None and connection.sock is sock  # not closed by the server, not reopened
        assert [first.status, *(a.status for a in answers)] == [200] * 6
        assert first.getheader("Connection") is None and first.getheader("Content-Length") == str(len(b'{"TableNames": []}'))
        closing = _list_tables(connection, {"Connection": "close"})  # the client asks to close: the server does
        assert closing.status == 200 and closing.getheader("Connection") == "close" and connection.sock is None


def test_requests_it_cannot_delimit_get_werkzeug_s_answer_and_a_closed_connection() -> None:
    with EmbeddedAwsServer() as server:
        with socket.create_connection((server.host, server.port), timeout=10) as raw:
            raw.sendall(b"GET /moto-api/data.json HTTP/1.0\r\nHost: x\r\n\r\n")
            answer = b"".join(iter(lambda: raw.recv(65536), b""))  # until the server closes
        assert answer.startswith(b"HTTP/1.1 200") and b'"dynamodb"' in answer
        connection = _raw(server)
        connection.putrequest("POST", "/")
        for name, value in (("X-Amz-Target", "DynamoDB_20120810.ListTables"), ("Transfer-Encoding", "chunked"),
                            ("Content-Type", "application/x-amz-json-1.0"),
                            ("Authorization", "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/dynamodb/"
                                              "aws4_request, SignedHeaders=host, Signature=0")):
            connection.putheader(name, value)
        connection.endheaders(b"2\r\n{}\r\n0\r\n\r\n")
        response = connection.getresponse()
        assert response.status == 200 and json.loads(response.read()) == {"TableNames": []}
        assert response.getheader("Connection") == "close"


@pytest.fixture
def s3() -> Iterator[Any]:
    """An S3 client of a fresh embedded AWS."""
    with EmbeddedAwsServer() as server:
        server.reset()
        yield boto3.client("s3", region_name="us-east-1", endpoint_url=server.url, aws_access_key_id="AKIDIRECT",
                           aws_secret_access_key="secret")


def test_s3_bodies_heads_and_100_continue_over_kept_connections(s3) -> None:
    s3.create_bucket(Bucket="kept")
    big = bytes(range(256)) * 8192  # 2 MiB from a file object: botocore sends Expect: 100-continue
    s3.put_object(Bucket="kept", Key="big", Body=io.BytesIO(big))
    s3.put_object(Bucket="kept", Key="empty", Body=b"")
    assert s3.head_object(Bucket="kept", Key="big")["ContentLength"] == len(big)  # a HEAD keeps its length
    assert s3.get_object(Bucket="kept", Key="big")["Body"].read() == big
    assert s3.get_object(Bucket="kept", Key="empty")["Body"].read() == b""
    assert [o["Key"] for o in s3.list_objects_v2(Bucket="kept")["Contents"]] == ["big", "empty"]
    s3.delete_object(Bucket="kept", Key="big")  # 204: no body
    assert [o["Key"] for o in s3.list_objects_v2(Bucket="kept")["Contents"]] == ["empty"]


def test_an_app_that_raises_answers_500_and_closes_and_the_server_serves_on() -> None:
    with EmbeddedAwsServer() as server:
        served = server.app

        def failing(environ: dict[str, Any], start_response: Any) -> Any:
            if environ.get("HTTP_X_FAIL"):
                raise RuntimeError("boom")
            return served(environ, start_response)

        server.wrap(lambda app: failing)
        connection = _raw(server)
        failed = _list_tables(connection, {"X-Fail": "1"})
        assert failed.status == 500 and failed.getheader("Connection") == "close"
        assert _list_tables(connection).status == 200  # a new connection, as the client reopens it


def _exchange(server: EmbeddedAwsServer, request: bytes) -> bytes:
    with socket.create_connection((server.host, server.port), timeout=10) as raw:
        raw.sendall(request)
        raw.shutdown(socket.SHUT_WR)
        return b"".join(iter(lambda: raw.recv(65536), b""))


def test_headers_are_read_as_http_server_reads_them() -> None:
    auth = (b"Authorization: AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/dynamodb/aws4_request,\r\n"
            b"  SignedHeaders=host, Signature=0\r\n")  # folded onto a second line: one header
    head = b"POST / HTTP/1.1\r\nHost: 127.0.0.1:1\r\nX-Amz-Target: DynamoDB_20120810.ListTables\r\n" + auth
    with EmbeddedAwsServer() as server:
        answer = _exchange(server, head + b"Content-Length: 2\r\nConnection: close\r\n\r\n{}")
        assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b'{"TableNames": []}')
        bad = _exchange(server, head + b"no colon here\r\nContent-Length: 2\r\n\r\n{}")
        assert bad.startswith(b"HTTP/1.1 400") and b"Bad header line" in bad
        many = b"".join(b"X-H%d: v\r\n" % i for i in range(101))
        assert _exchange(server, head + many + b"Content-Length: 2\r\n\r\n{}").startswith(b"HTTP/1.1 431")
        long = b"X-Long: " + b"v" * 70000 + b"\r\n"
        assert _exchange(server, head + long + b"Content-Length: 2\r\n\r\n{}").startswith(b"HTTP/1.1 431")


def test_s3_metadata_keeps_its_underscores_through_the_headers_read(s3) -> None:
    s3.create_bucket(Bucket="meta")
    s3.put_object(Bucket="meta", Key="k", Body=b"x", Metadata={"my_key": "a: b", "other-key": "c"})
    assert s3.head_object(Bucket="meta", Key="k")["Metadata"] == {"my_key": "a: b", "other-key": "c"}
