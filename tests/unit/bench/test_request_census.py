"""The embedded AWS's request census (bench/request_census.py): requests named by service and operation, counted
with their serving CPU, taken per measurement."""

from __future__ import annotations

import boto3

from bench.request_census import RequestCensus, Tally, render, request_name
from updraft.local.moto_server import EmbeddedAwsServer


def test_requests_through_a_wrapped_embedded_aws_are_named_and_counted_until_taken() -> None:
    census = RequestCensus()
    with EmbeddedAwsServer() as server:
        server.wrap(census.wrap)
        credentials = {"region_name": "us-east-1", "aws_access_key_id": "census", "aws_secret_access_key": "x",
                       "endpoint_url": server.url}
        dynamodb, s3 = boto3.client("dynamodb", **credentials), boto3.client("s3", **credentials)
        dynamodb.list_tables()
        dynamodb.list_tables()
        s3.create_bucket(Bucket="census")
        first = census.take()
        dynamodb.list_tables()
        second = census.take()
        server.reset()

    assert {name: t.count for name, t in first.items()} == {"dynamodb ListTables": 2, "s3 PUT": 1}
    assert list(first) == ["dynamodb ListTables", "s3 PUT"]  # the most frequent first
    assert all(t.cpu_s > 0 for t in first.values())
    assert {name: t.count for name, t in second.items()} == {"dynamodb ListTables": 1}


def test_an_unsigned_request_is_named_by_its_method() -> None:
    assert request_name({"REQUEST_METHOD": "GET", "PATH_INFO": "/"}) == "unsigned GET"


def test_the_table_gives_requests_per_task_and_cpu_per_request_with_the_total_first() -> None:
    table = render({"dynamodb UpdateItem": Tally(30, 0.075), "s3 PUT": Tally(10, 0.02)}, tasks=10)

    assert table.splitlines()[2:] == ["| all | 4.0 | 2.4 ms | 9.5 ms |",
                                      "| dynamodb UpdateItem | 3.0 | 2.5 ms | 7.5 ms |",
                                      "| s3 PUT | 1.0 | 2.0 ms | 2.0 ms |"]
