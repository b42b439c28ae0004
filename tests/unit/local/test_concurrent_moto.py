"""The concurrent embedded DynamoDB keeps each item atomic and lets different items through at the same time.

moto's own check-then-write is widened here (its item lookup pauses) so that without the item locks two racing
conditional writes would both pass their check: the race then always happens, not once in a thousand runs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from updraft.local.concurrent_moto import ConcurrentMoto

RACERS = 8


@pytest.fixture(scope="module")
def table() -> Iterator[Any]:
    """One table for the module: each test writes keys of its own."""
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(TableName="t", BillingMode="PAY_PER_REQUEST",
                            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                                       {"AttributeName": "sk", "KeyType": "RANGE"}],
                            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                                  {"AttributeName": "sk", "AttributeType": "S"}])
        yield client


@pytest.fixture
def unserialized_moto(monkeypatch: pytest.MonkeyPatch) -> None:
    """moto's own stubber for the test, even where an earlier test in this process left ``serialized_moto``'s
    one-at-a-time patch on (seen under xdist): these tests need requests to meet inside moto."""
    from moto.core import botocore_stubber

    from updraft.local import embedded_aws

    if embedded_aws._unpatched_call is not None:
        monkeypatch.setattr(botocore_stubber.BotocoreStubber, "__call__", embedded_aws._unpatched_call)


def _slow_lookups(monkeypatch: pytest.MonkeyPatch, pause: Any) -> None:
    from moto.dynamodb.models.table import Table

    get_item = Table.get_item

    def paused(self: Any, *args: Any, **kwargs: Any) -> Any:
        found = get_item(self, *args, **kwargs)
        pause()
        return found

    monkeypatch.setattr(Table, "get_item", paused)


def _race(work: Any) -> list[Any]:
    results: list[Any] = [None] * RACERS
    start = threading.Barrier(RACERS)

    def run(i: int) -> None:
        start.wait()
        results[i] = work(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(RACERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def _claim(client: Any, pk: str, owner: int) -> bool:
    try:
        client.put_item(TableName="t", Item={"pk": {"S": pk}, "sk": {"S": "claim"}, "owner": {"N": str(owner)}},
                        ConditionExpression="attribute_not_exists(pk)")
        return True
    except client.exceptions.ConditionalCheckFailedException:
        return False


def test_racing_conditional_writes_to_one_item_have_exactly_one_winner(table, monkeypatch, unserialized_moto):
    _slow_lookups(monkeypatch, lambda: time.sleep(0.01))
    with ConcurrentMoto().in_process():
        won = _race(lambda i: _claim(table, "one", i))
    assert sum(won) == 1
    item = table.get_item(TableName="t", Key={"pk": {"S": "one"}, "sk": {"S": "claim"}})["Item"]
    assert won[int(item["owner"]["N"])]  # the stored owner is the one writer told it won


def test_the_widened_race_does_break_unguarded_moto(table, monkeypatch, unserialized_moto):
    """The control: without the locks every writer checks before any writes (they all meet inside moto), and
    every one of them wins: what the locks prevent."""
    _slow_lookups(monkeypatch, threading.Barrier(RACERS, timeout=10).wait)
    won = _race(lambda i: _claim(table, "two", i))
    assert sum(won) == RACERS


def test_requests_to_different_items_run_at_the_same_time(table, monkeypatch, unserialized_moto):
    """Every writer waits inside moto for all the others: only possible if none of them holds the others out."""
    inside = threading.Barrier(RACERS, timeout=10)
    _slow_lookups(monkeypatch, inside.wait)
    with ConcurrentMoto().in_process():
        won = _race(lambda i: _claim(table, f"item-{i}", i))
    assert all(won)


def test_a_query_reads_its_partition_while_other_partitions_are_written(table):
    for i in range(5):
        table.put_item(TableName="t", Item={"pk": {"S": "run"}, "sk": {"S": f"ti-{i}"}})
    guard = ConcurrentMoto()
    with guard.in_process():
        def work(i: int) -> int:
            if i % 2:
                table.put_item(TableName="t", Item={"pk": {"S": f"other-{i}"}, "sk": {"S": "x"}})
                return -1
            return len(table.query(TableName="t", KeyConditionExpression="pk = :p",
                                   ExpressionAttributeValues={":p": {"S": "run"}})["Items"])
        counts = _race(work)
    assert [c for c in counts if c != -1] == [5] * (RACERS // 2)
    assert guard.take_counts() == {"Query": RACERS // 2, "PutItem": RACERS // 2}


def test_which_lock_a_request_takes():
    """An item request its item, a Query its partition (as pynamodb writes its key condition), the rest the table."""
    from updraft.local.item_locks import DynamoItemLocks

    locks = DynamoItemLocks(lambda table: ("pk", "sk") if table == "t" else None)
    run = {"S": "RUN#d#r"}
    query = {"KeyConditionExpression": "(#0 = :0 AND begins_with(#1, :1))",
             "ExpressionAttributeNames": {"#0": "pk", "#1": "sk"},
             "ExpressionAttributeValues": {":0": run, ":1": {"S": "TI#"}}}
    assert locks._key("Query", "t", query) == ('{"S":"RUN#d#r"}', None)
    assert locks._key("Query", "t", {**query, "IndexName": "list_index"}) is None
    assert locks._key("UpdateItem", "t", {"Key": {"pk": run, "sk": {"S": "TI#a"}}}) == (
        '{"S":"RUN#d#r"}', '{"S":"RUN#d#r"}\x00{"S":"TI#a"}')
    assert locks._key("PutItem", "t", {"Item": {"pk": run, "sk": {"S": "TI#a"}, "state": {"S": "queued"}}}) == (
        '{"S":"RUN#d#r"}', '{"S":"RUN#d#r"}\x00{"S":"TI#a"}')
    assert locks._key("Scan", "t", {}) is None
    assert locks._key("GetItem", "unknown", {"Key": {"pk": run}}) is None
