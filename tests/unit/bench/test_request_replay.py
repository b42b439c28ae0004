"""A run's DynamoDB requests recorded through the embedded AWS and replayed on a fresh one
(bench/request_replay.py): the same operations in the same order meet the same answers."""

from __future__ import annotations

from pathlib import Path

import boto3
import pytest

from bench.request_replay import Recorder, read, render, replay, tables_of
from updraft.local.moto_server import EmbeddedAwsServer
from updraft.store.config import StoreConfig
from updraft.store.tables import create_table

TABLE = "replay-state"


def test_recorded_requests_replay_in_order_with_the_same_answers(tmp_path: Path) -> None:
    recorder = Recorder()
    with EmbeddedAwsServer() as server:
        server.reset()
        client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=server.url,
                              aws_access_key_id="replay", aws_secret_access_key="x")
        create_table(StoreConfig(table_name=TABLE, region="us-east-1", host=server.url), client=client)
        server.wrap(recorder.wrap)
        key = {"pk": {"S": "a"}, "sk": {"S": "1"}}
        client.put_item(TableName=TABLE, Item={**key, "n": {"N": "1"}})
        with pytest.raises(client.exceptions.ConditionalCheckFailedException):
            client.update_item(TableName=TABLE, Key=key, UpdateExpression="SET n = :two",
                               ConditionExpression="n = :zero",
                               ExpressionAttributeValues={":two": {"N": "2"}, ":zero": {"N": "0"}})
        client.transact_write_items(TransactItems=[{"Update": {
            "TableName": TABLE, "Key": key, "UpdateExpression": "SET n = :two", "ConditionExpression": "n = :one",
            "ExpressionAttributeValues": {":one": {"N": "1"}, ":two": {"N": "2"}}}}])
        assert client.get_item(TableName=TABLE, Key=key)["Item"]["n"] == {"N": "2"}
        client.list_tables()
        server.reset()
    recording = tmp_path / "requests.jsonl"
    recorder.write(recording)

    requests = read(recording)
    assert [r["operation"] for r in requests] == ["PutItem", "UpdateItem", "TransactWriteItems", "GetItem",
                                                  "ListTables"]
    assert tables_of(requests) == [TABLE]
    result = replay(requests)
    assert result["count"] == {"PutItem": 1, "UpdateItem": 1, "TransactWriteItems": 1, "GetItem": 1,
                               "ListTables": 1}
    # The refused update is refused again and the transaction lands: the replay met the run's states.
    assert result["status"] == {"PutItem 200": 1, "UpdateItem 400": 1, "TransactWriteItems 200": 1,
                                "GetItem 200": 1, "ListTables 200": 1}
    table = render(result, calls=1234)
    assert "| all | 5 |" in table and "| UpdateItem | 1 | 400: 1 |" in table
    assert table.endswith("Python function calls of the whole replay: 1,234")
