"""Transactions on the concurrent embedded AWS: atomic under racing clients, item-local, refused as DynamoDB refuses.

Through the embedded AWS server with boto3, as local mode's schedulers reach it. The racing tests model a limit as
counters (decision 0023): shards with ``free``, instances that hold one slot of one shard while ``queued``; a claim
is one transaction (the shard's ``free >= 1`` take, then the instance's ``scheduled -> queued``), a release another
(the instance's end, then the give). Instances are drawn at random, so many claims are cancelled by the instance's
condition after moto has already applied the take: the rollback is exercised on every run.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from updraft.local.latency import LatencyProfile, LatencySource, Lognormal
from updraft.local.moto_server import EmbeddedAwsServer

TABLE = "txn"
SHARDS, FREE, INSTANCES, RACERS, ROUNDS = 3, 4, 40, 8, 60
LIMIT = "LIMIT#pool"


def _client(server: EmbeddedAwsServer) -> Any:
    return boto3.client("dynamodb", region_name="us-east-1", endpoint_url=server.url,
                        config=Config(retries={"max_attempts": 1}, max_pool_connections=RACERS * 2))


def _start(**kwargs: Any) -> tuple[EmbeddedAwsServer, Any]:
    server = EmbeddedAwsServer(concurrent=True, **kwargs).start()
    server.reset()
    client = _client(server)
    client.create_table(TableName=TABLE, BillingMode="PAY_PER_REQUEST",
                        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                                   {"AttributeName": "sk", "KeyType": "RANGE"}],
                        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                              {"AttributeName": "sk", "AttributeType": "S"}])
    return server, client


@pytest.fixture
def aws() -> Iterator[tuple[EmbeddedAwsServer, Any]]:
    server, client = _start()
    yield server, client
    server.stop()


def _constant(ms: float) -> Lognormal:
    return Lognormal(ms, ms)


# Long enough for the racing requests to land inside the window on a loaded machine.
WINDOW_MS = 3000.0


def _window_profile(transaction_ms: float) -> LatencyProfile:
    """Fixed latencies: every transaction stays prepared 80 % of ``transaction_ms``; other requests take 1 ms."""
    one = _constant(1.0)
    return LatencyProfile(dynamo_read=one, dynamo_write=one, dynamo_many=one,
                          dynamo_transaction=_constant(transaction_ms), transaction_window=0.8)


def _until_prepared(server: EmbeddedAwsServer) -> None:
    """Wait until the transaction sent from another thread is prepared (the racing requests must meet it)."""
    deadline = time.monotonic() + 30
    while server.guard.conflicts.in_progress() == 0:  # type: ignore[union-attr]
        assert time.monotonic() < deadline, "the transaction was never prepared"
        time.sleep(0.005)


def _key(pk: str, sk: str) -> dict[str, Any]:
    return {"pk": {"S": pk}, "sk": {"S": sk}}


def _seed(client: Any) -> None:
    for s in range(SHARDS):
        client.put_item(TableName=TABLE, Item={**_key(LIMIT, f"SHARD#{s}"), "free": {"N": str(FREE)}})
    for i in range(INSTANCES):
        client.put_item(TableName=TABLE, Item={**_key(LIMIT, f"TI#{i:03d}"), "state": {"S": "scheduled"}})


def _claim(shard: int, instance: int) -> list[dict[str, Any]]:
    return [
        {"Update": {"TableName": TABLE, "Key": _key(LIMIT, f"SHARD#{shard}"), "UpdateExpression": "SET #f = #f - :one",
                    "ConditionExpression": "#f >= :one", "ExpressionAttributeNames": {"#f": "free"},
                    "ExpressionAttributeValues": {":one": {"N": "1"}}}},
        {"Update": {"TableName": TABLE, "Key": _key(LIMIT, f"TI#{instance:03d}"),
                    "UpdateExpression": "SET #s = :queued, held_in = :shard", "ConditionExpression": "#s = :scheduled",
                    "ExpressionAttributeNames": {"#s": "state"},
                    "ExpressionAttributeValues": {":queued": {"S": "queued"}, ":scheduled": {"S": "scheduled"},
                                                  ":shard": {"N": str(shard)}}}},
    ]


def _release(shard: int, instance: int) -> list[dict[str, Any]]:
    return [
        {"Update": {"TableName": TABLE, "Key": _key(LIMIT, f"TI#{instance:03d}"),
                    "UpdateExpression": "SET #s = :scheduled REMOVE held_in",
                    "ConditionExpression": "#s = :queued AND held_in = :shard",
                    "ExpressionAttributeNames": {"#s": "state"},
                    "ExpressionAttributeValues": {":queued": {"S": "queued"}, ":scheduled": {"S": "scheduled"},
                                                  ":shard": {"N": str(shard)}}}},
        {"Update": {"TableName": TABLE, "Key": _key(LIMIT, f"SHARD#{shard}"), "UpdateExpression": "SET #f = #f + :one",
                    "ExpressionAttributeNames": {"#f": "free"}, "ExpressionAttributeValues": {":one": {"N": "1"}}}},
    ]


def _check(items: list[dict[str, Any]]) -> None:
    """Every shard's free slots plus its holders is what it started with; no count below zero."""
    free = {int(i["sk"]["S"].split("#")[1]): int(i["free"]["N"]) for i in items if i["sk"]["S"].startswith("SHARD#")}
    held = {s: 0 for s in free}
    for item in items:
        if item["sk"]["S"].startswith("TI#") and item["state"]["S"] == "queued":
            held[int(item["held_in"]["N"])] += 1
        elif item["sk"]["S"].startswith("TI#"):
            assert "held_in" not in item, item
    assert len(free) == SHARDS
    assert all(f >= 0 for f in free.values()), free
    assert {s: free[s] + held[s] for s in free} == dict.fromkeys(free, FREE), (free, held)


def _race(server: EmbeddedAwsServer) -> dict[str, int]:
    """RACERS threads claim and release at random while two more read the limit whole (a Query of its partition,
    a Scan) and one writes unrelated items of the same partition. Outcomes by cancellation reason."""
    outcomes: dict[str, int] = {}
    failures: list[BaseException] = []
    lock = threading.Lock()
    stop = threading.Event()
    start = threading.Barrier(RACERS + 3)

    def count(outcome: str) -> None:
        with lock:
            outcomes[outcome] = outcomes.get(outcome, 0) + 1

    def racer(seed: int) -> None:
        client, rng, mine = _client(server), random.Random(seed), []
        start.wait()
        for _ in range(ROUNDS):
            if mine and rng.random() < 0.5:
                shard, instance = mine.pop(rng.randrange(len(mine)))
                items = _release(shard, instance)
            else:
                shard, instance = rng.randrange(SHARDS), rng.randrange(INSTANCES)
                items = _claim(shard, instance)
            try:
                client.transact_write_items(TransactItems=items)
            except ClientError as e:
                reasons = [r["Code"] for r in e.response.get("CancellationReasons", [])]
                count("+".join(sorted(set(reasons) - {"None"})) or e.response["Error"]["Code"])
                if items[0]["Update"]["Key"]["sk"]["S"].startswith("TI#") and "TransactionConflict" in reasons:
                    mine.append((shard, instance))  # a release refused by a conflict: still ours
                continue
            count("released" if items[0]["Update"]["Key"]["sk"]["S"].startswith("TI#") else "claimed")
            if not items[0]["Update"]["Key"]["sk"]["S"].startswith("TI#"):
                mine.append((shard, instance))

    def reader(scan: bool) -> None:
        client = _client(server)
        start.wait()
        while not stop.is_set():
            if scan:
                items = client.scan(TableName=TABLE, ConsistentRead=True)["Items"]
            else:
                items = client.query(TableName=TABLE, ConsistentRead=True, KeyConditionExpression="pk = :p",
                                     ExpressionAttributeValues={":p": {"S": LIMIT}})["Items"]
            _check(items)
            count("scans" if scan else "queries")

    def writer() -> None:
        client = _client(server)
        start.wait()
        for i in range(ROUNDS):
            client.put_item(TableName=TABLE, Item={**_key(LIMIT, f"OTHER#{i:03d}"), "n": {"N": str(i)}})

    def guarded(work: Any, *args: Any) -> None:
        try:
            work(*args)
        except BaseException as e:  # the test thread re-raises it
            failures.append(e)
            stop.set()

    threads = [threading.Thread(target=guarded, args=(racer, i)) for i in range(RACERS)]
    readers = [threading.Thread(target=guarded, args=(reader, scan)) for scan in (False, True)]
    threads.append(threading.Thread(target=guarded, args=(writer,)))
    for t in threads + readers:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    for t in readers:
        t.join()
    if failures:
        raise failures[0]
    return outcomes


def _final(client: Any) -> list[dict[str, Any]]:
    items = client.query(TableName=TABLE, ConsistentRead=True, KeyConditionExpression="pk = :p",
                         ExpressionAttributeValues={":p": {"S": LIMIT}})["Items"]
    others = [i for i in items if i["sk"]["S"].startswith("OTHER#")]
    assert len(others) == ROUNDS  # no cancelled transaction's rollback undid a write to another item
    return items


@pytest.mark.slow
def test_racing_claims_and_releases_keep_every_shard_whole(aws):
    server, client = aws
    _seed(client)
    outcomes = _race(server)
    _check(_final(client))
    assert set(outcomes) == {"claimed", "released", "ConditionalCheckFailed", "queries", "scans"}, outcomes
    assert outcomes["claimed"] > 0 and outcomes["released"] > 0
    assert outcomes["ConditionalCheckFailed"] > 0  # the instance's condition refused after the take: rolled back
    assert outcomes["queries"] > 0 and outcomes["scans"] > 0
    # Without conflict emulation a transaction waits for another's items: never refused for meeting them.
    assert server.guard.conflicts is None


@pytest.mark.slow
def test_conflicts_are_emulated_with_a_transaction_window_or_when_asked():
    profile = _window_profile(1.0)
    for kwargs, emulated in (({"latency": LatencySource(profile)}, True),
                             ({"latency": LatencySource(LatencyProfile(transaction_window=None))}, False),
                             ({"latency": LatencySource(profile), "conflicts": False}, False),
                             ({"conflicts": True}, True)):
        server = EmbeddedAwsServer(concurrent=True, **kwargs).start()
        try:
            assert (server.guard.conflicts is not None) is emulated, kwargs
        finally:
            server.stop()


@pytest.mark.slow
def test_racing_with_conflicts_refuses_transactions_and_keeps_every_shard_whole():
    server, client = _start(latency=LatencySource(_window_profile(20.0)))
    try:
        _seed(client)
        outcomes = _race(server)
        _check(_final(client))
        refused = server.guard.conflicts.refused  # type: ignore[union-attr]
    finally:
        server.stop()
    conflicts = sum(n for o, n in outcomes.items() if "TransactionConflict" in o)
    assert set(outcomes) <= {"claimed", "released", "ConditionalCheckFailed", "TransactionConflict", "queries",
                             "scans"}, outcomes
    assert conflicts > 0 and outcomes["claimed"] > 0 and outcomes["released"] > 0
    assert refused == {"TransactWriteItems": conflicts}  # every refusal the server counted reached its client


@pytest.mark.slow
def test_a_cancelled_transaction_puts_back_only_its_own_items(aws, monkeypatch):
    """While a transaction is inside moto (it has applied its first update), another client writes a third item
    of the same partition; the transaction is then cancelled by its second item's condition. Its first item is
    back as it was and the third item's write stands (moto's own rollback restored the whole table)."""
    from moto.dynamodb.models.table import Table

    server, client = aws
    client.put_item(TableName=TABLE, Item={**_key("P", "a"), "n": {"N": "1"}})
    client.put_item(TableName=TABLE, Item={**_key("P", "b"), "n": {"N": "1"}})
    inside, written = threading.Event(), threading.Event()
    get_item = Table.get_item

    def paused(self: Any, hash_key: Any, range_key: Any = None, *args: Any, **kwargs: Any) -> Any:
        if range_key is not None and range_key.value == "b" and threading.current_thread().name != "MainThread" \
                and not inside.is_set():
            inside.set()
            assert written.wait(10)
        return get_item(self, hash_key, range_key, *args, **kwargs)

    monkeypatch.setattr(Table, "get_item", paused)
    errors: list[Any] = []

    def transaction() -> None:
        try:
            _client(server).transact_write_items(TransactItems=[
                {"Update": {"TableName": TABLE, "Key": _key("P", "a"), "UpdateExpression": "SET n = :two",
                            "ExpressionAttributeValues": {":two": {"N": "2"}}}},
                {"Update": {"TableName": TABLE, "Key": _key("P", "b"), "UpdateExpression": "SET n = :two",
                            "ConditionExpression": "n = :zero",
                            "ExpressionAttributeValues": {":two": {"N": "2"}, ":zero": {"N": "0"}}}}])
        except ClientError as e:
            errors.append(e.response)

    thread = threading.Thread(target=transaction, name="transaction")
    thread.start()
    assert inside.wait(10)
    client.put_item(TableName=TABLE, Item={**_key("P", "c"), "n": {"N": "3"}})  # not held up by the transaction
    written.set()
    thread.join()
    assert [r["Code"] for r in errors[0]["CancellationReasons"]] == ["None", "ConditionalCheckFailed"]
    items = {i["sk"]["S"]: i["n"]["N"] for i in client.query(
        TableName=TABLE, KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "P"}})["Items"]}
    assert items == {"a": "1", "b": "1", "c": "3"}


def _in_thread(work: Any) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []

    def run() -> None:
        try:
            out.append(work())
        except ClientError as e:
            out.append(e.response)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, out


def _update(pk: str, value: str) -> dict[str, Any]:
    return {"Update": {"TableName": TABLE, "Key": _key(pk, "x"), "UpdateExpression": "SET v = :v",
                       "ExpressionAttributeValues": {":v": {"S": value}}}}


def _value(client: Any, pk: str) -> str:
    return client.get_item(TableName=TABLE, Key=_key(pk, "x"))["Item"]["v"]["S"]


@pytest.mark.slow
def test_requests_meeting_a_transaction_are_refused_as_dynamodb_refuses_them():
    """A transaction prepared 0.3-2.7 s after it is sent (fixed latencies): meanwhile a PutItem of one of its
    items is refused with TransactionConflictException, a TransactWriteItems and a TransactGetItems naming one are
    cancelled with that item's reason TransactionConflict, and a GetItem reads the item as last committed."""
    server, client = _start(latency=LatencySource(_window_profile(WINDOW_MS)))
    try:
        for pk in ("X", "Y", "Z"):
            client.put_item(TableName=TABLE, Item={**_key(pk, "x"), "v": {"S": "old"}})
        thread, out = _in_thread(lambda: client.transact_write_items(
            TransactItems=[_update("X", "new"), _update("Y", "new")]))
        _until_prepared(server)
        with pytest.raises(ClientError) as put:
            client.put_item(TableName=TABLE, Item={**_key("X", "x"), "v": {"S": "put"}})
        with pytest.raises(ClientError) as update:
            client.update_item(TableName=TABLE, Key=_key("Y", "x"), UpdateExpression="SET v = :v",
                               ExpressionAttributeValues={":v": {"S": "update"}})
        with pytest.raises(ClientError) as delete:
            client.delete_item(TableName=TABLE, Key=_key("X", "x"))
        with pytest.raises(ClientError) as write:
            client.transact_write_items(TransactItems=[_update("Z", "other"), _update("Y", "other")])
        assert _value(client, "X") == "old"
        with pytest.raises(ClientError) as get:
            client.transact_get_items(TransactItems=[{"Get": {"TableName": TABLE, "Key": _key("X", "x")}}])
        thread.join()
        refused = dict(server.guard.conflicts.refused)  # type: ignore[union-attr]
        assert "ConsumedCapacity" in out[0]  # the first transaction committed
        assert (_value(client, "X"), _value(client, "Y"), _value(client, "Z")) == ("new", "new", "old")
    finally:
        server.stop()
    for refused_write in (put, update, delete):
        assert refused_write.value.response["Error"] == {"Code": "TransactionConflictException",
                                                         "Message": "Transaction is ongoing for the item"}
    assert write.value.response["Error"]["Code"] == "TransactionCanceledException"
    assert write.value.response["CancellationReasons"] == [
        {"Code": "None"}, {"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"}]
    assert get.value.response["CancellationReasons"] == [
        {"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"}]
    assert refused == {"PutItem": 1, "UpdateItem": 1, "DeleteItem": 1, "TransactWriteItems": 1, "TransactGetItems": 1}


@pytest.mark.slow
@pytest.mark.parametrize("write", ["put", "transaction"])
def test_a_write_during_a_transactional_read_cancels_the_read(write):
    """The write goes through (a single write at once, a transaction at its commit); the read is cancelled."""
    server, client = _start(latency=LatencySource(_window_profile(WINDOW_MS)))
    try:
        client.put_item(TableName=TABLE, Item={**_key("X", "x"), "v": {"S": "old"}})
        thread, out = _in_thread(lambda: client.transact_get_items(
            TransactItems=[{"Get": {"TableName": TABLE, "Key": _key("X", "x")}}]))
        _until_prepared(server)
        if write == "put":
            client.put_item(TableName=TABLE, Item={**_key("X", "x"), "v": {"S": "new"}})
        else:
            client.transact_write_items(TransactItems=[_update("X", "new")])
        thread.join()
        assert _value(client, "X") == "new"
    finally:
        server.stop()
    assert out[0]["Error"]["Code"] == "TransactionCanceledException"
    assert out[0]["CancellationReasons"] == [
        {"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"}]



@pytest.mark.slow
def test_a_transaction_takes_its_locks_in_one_global_order_whatever_its_request_order(monkeypatch):
    """Table, then each partition in key order with its items after it: the same sequence for both request
    orders (two transactions naming the same items in opposite orders then wait for each other, never deadlock),
    and the one a single-item request or a Query follows for its own locks."""
    from updraft.local import item_locks

    taken: list[str] = []
    keyed_get = item_locks.KeyedLocks.get

    def recorded(self: Any, key: str) -> Any:
        taken.append(key)
        return keyed_get(self, key)

    monkeypatch.setattr(item_locks.KeyedLocks, "get", recorded)
    locks = item_locks.DynamoItemLocks(lambda table: ("pk", "sk") if table == TABLE else None)

    def body(*pks: str) -> dict[str, Any]:
        return {"TransactItems": [{"Update": {"TableName": TABLE, "Key": _key(pk, "x")}} for pk in pks]
                + [{"ConditionCheck": {"TableName": TABLE, "Key": _key("A", "y")}}]}

    sequences = []
    for pks in (("A", "B"), ("B", "A")):
        taken.clear()
        with locks.hold("TransactWriteItems", body(*pks)):
            sequences.append(list(taken))
    a, b = '{"S":"A"}', '{"S":"B"}'
    x, y = '{"S":"x"}', '{"S":"y"}'
    assert sequences[0] == sequences[1] == [a, f"{a}\x00{x}", f"{a}\x00{y}", b, f"{b}\x00{x}"]
    assert locks.transaction_items({"TransactItems": [{"Put": {"TableName": "unknown", "Item": {}}}]}) is None
