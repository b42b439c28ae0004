"""The capacity recorder charges a TransactWriteItems item by item at twice a write's units, landed or
cancelled, on each item's own partition (bench/capacity_recorder.py)."""

from __future__ import annotations

import boto3
import pytest
from moto import mock_aws

from bench.capacity_recorder import TRANSACTION_FACTOR, CapacityRecorder
from updraft.store.config import StoreConfig
from updraft.store.tables import create_table

TABLE = "capacity-recorder-test"


@pytest.fixture
def client(monkeypatch):
    for name, value in {"AWS_DEFAULT_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "t",
                        "AWS_SECRET_ACCESS_KEY": "t"}.items():
        monkeypatch.setenv(name, value)
    with mock_aws():
        create_table(StoreConfig(table_name=TABLE, region="us-east-1"))
        yield boto3.client("dynamodb", region_name="us-east-1")


def _update(pk: str, condition: str | None = None) -> dict:
    update = {"TableName": TABLE, "Key": {"pk": {"S": pk}, "sk": {"S": "COUNTER"}},
              "UpdateExpression": "ADD slots :n", "ExpressionAttributeValues": {":n": {"N": "-1"}}}
    if condition:
        update["ConditionExpression"] = condition
    return {"Update": update}


def test_each_item_of_a_transaction_is_charged_twice_a_write_on_its_partition(client):
    recorder = CapacityRecorder()
    with recorder.recording():
        client.transact_write_items(TransactItems=[
            {"Put": {"TableName": TABLE, "Item": {"pk": {"S": "RUN#a"}, "sk": {"S": "TI#t"}, "state": {"S": "q"}}}},
            _update("LIMIT#p")])
    charges = recorder.take()
    assert [(c.operation, c.partition, c.write_units, c.request) for c in charges] == [
        ("TransactWriteItems", "RUN#a", TRANSACTION_FACTOR, True),
        ("TransactWriteItems", "LIMIT#p", TRANSACTION_FACTOR, False)]


def test_a_cancelled_transaction_is_charged_as_if_it_landed(client):
    recorder = CapacityRecorder()
    with recorder.recording(), pytest.raises(client.exceptions.TransactionCanceledException):
        client.transact_write_items(TransactItems=[_update("LIMIT#p", "slots >= :n"), _update("LIMIT#q")])
    charges = recorder.take()
    assert [(c.partition, c.write_units) for c in charges] == [("LIMIT#p", 2), ("LIMIT#q", 2)]
