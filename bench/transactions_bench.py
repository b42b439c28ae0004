"""A hot limit two ways on the latency-true embedded AWS: today's single-item writes against decision 0023's
transactions, with 1, 2, 4, 8 concurrent claimers; requests, write units, conflicts and tries claimed per second.

Run: ``.venv/bin/python bench/transactions_bench.py [--tries 50] [--claimers 1,2,4,8] [--shards 32,1]
[--designs today,txn1,txn25] [--seed 7]``.

The embedded AWS is the server local mode runs (``updraft/local/moto_server.py``), concurrent (per-item locks,
transactions holding their items: ``item_locks``), with AWS's latency profile (``updraft/local/latency.py``) and
DynamoDB's transaction conflicts emulated (``transaction_conflicts``). Claimers are threads with boto3 clients;
each claims ``--tries`` tries of its own and releases each one at once (no run time: every try is a take and a
release of the hot limit, the worst case for it). Requests are raw boto3 calls shaped as the store's:

- **today** (the single-write design before tickets, decision 0024, kept here as the baseline 0023 was measured
  against): a sharded limit's take is the
  holder's mark (UpdateItem, conditional on not marked), its home shard's conditional UpdateItem (room, entry
  room, not holding; the next shards on refusal, as ``FAST_PROBES``), then the instance's ``scheduled -> queued``
  UpdateItem; the try's end is an UpdateItem of the instance and a shard UpdateItem giving the entry back (a final
  release leaves its mark to expire). A limit that is its root alone (a run's ``max_active_tasks``) takes no mark;
  its root holds at most 4 entries (``SHARD_ENTRIES``), as today, so claimers beyond 4 meet it full and retry.
- **txn** (decision 0023): a claim is one TransactWriteItems of the instances' ``scheduled -> queued`` and one
  ``free >= k`` take of a shard (``--batch`` instances at once: 1, or 25), a release one TransactWriteItems of the
  instance's end and the give. A cancelled transaction with a ``TransactionConflict`` is sent again after a
  jittered wait (0-5 ms, doubling, at most 0-20 ms); one refused by ``free >= k`` tries the next shard.

Limits: a pool of 32 shards (today: 4 slots each, 128 slots; txn: 64 each, 2,048 slots, decision 0023's
``ceil(size / 64)`` shards) and a run's limit of 1 shard (size 1,000). Write units by DynamoDB's rules for items
under 1 KB (all of these are): a single write 1 WCU, refused or not; a transactional write 2 WCU per item; a
cancelled transaction is charged as if it had written (2 per item: an upper bound, AWS documents no refund).
Conflicts: refusals per transaction sent (the server's count, ``ConcurrentMoto.conflicts.refused``).

Two rates: "here" is tries over the wall time on this machine (AWS's latency plus moto's CPU, every claimer and
moto sharing one interpreter lock: a lower bound); "on AWS's latency" is the same requests with moto's CPU taken
out, each claimer's requests at the profile's mean latency (writes 5.4 ms, transactions 10.8 ms) plus its
conflict back-offs, tries over the slowest claimer's total. Conflicts are counted at the rate reached here, which
is below AWS's: on AWS they grow with the rate per shard (decision 0023).
"""

from __future__ import annotations

import argparse
import random
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / "shared")]

import boto3  # noqa: E402
from botocore.config import Config  # noqa: E402
from botocore.exceptions import ClientError  # noqa: E402

from updraft.local.latency import AWS, LatencySource  # noqa: E402
from updraft.local.moto_server import EmbeddedAwsServer  # noqa: E402

TABLE = "bench"
SHARD_SLOTS, SHARD_ENTRIES, FAST_PROBES = 4, 4, 3  # the single-write design's shard shape (decision 0024)
POOL_SHARDS, TXN_SHARD_FREE, RUN_LIMIT = 32, 64, 1000
TRANSACTION_WCU = 2
MAX_BACKOFF_S = 0.02  # a conflicted transaction waits up to 5, 10, then 20 ms (jittered) before it is sent again
DESIGNS = {"today": ("today", 1), "txn1": ("txn", 1), "txn25": ("txn", 25)}
MEAN_WRITE_S, MEAN_TRANSACTION_S = AWS.dynamo_write.mean_s, AWS.dynamo_transaction.mean_s
INSTANCE_PAD = "x" * 400  # a task instance item's other attributes (~0.5 KB in all, as the store's)


@dataclass
class Tally:
    tries: int = 0
    requests: int = 0
    wcu: int = 0
    transactions: int = 0
    full: int = 0  # refusals for want of room (today: a shard's slots or entries; txn: free < k)
    aws_s: dict[int, float] = field(default_factory=dict)  # per claimer thread: its requests' mean latencies
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, requests: int = 0, wcu: int = 0, transactions: int = 0, full: int = 0, tries: int = 0,
            waited: float = 0.0) -> None:
        """Count requests (each a write, or a transaction when ``transactions``) and the time they take on AWS."""
        spent = waited + (transactions * MEAN_TRANSACTION_S if transactions else requests * MEAN_WRITE_S)
        me = threading.get_ident()
        with self.lock:
            self.aws_s[me] = self.aws_s.get(me, 0.0) + spent
            self.requests += requests
            self.wcu += wcu
            self.transactions += transactions
            self.full += full
            self.tries += tries


def _key(pk: str, sk: str) -> dict[str, Any]:
    return {"pk": {"S": pk}, "sk": {"S": sk}}


def _client(server: EmbeddedAwsServer) -> Any:
    return boto3.client("dynamodb", region_name="us-east-1", endpoint_url=server.url, aws_access_key_id="bench",
                        aws_secret_access_key="bench", config=Config(retries={"max_attempts": 1},
                                                                     max_pool_connections=4))


def _refused(error: ClientError) -> str:
    code = error.response["Error"]["Code"]
    if code == "TransactionCanceledException":
        reasons = {r["Code"] for r in error.response.get("CancellationReasons", [])}
        return "conflict" if "TransactionConflict" in reasons else "condition"
    if code == "ConditionalCheckFailedException":
        return "condition"
    raise error


# ------------------------------------------------------------------------------------------------------ setup
def _setup(client: Any, design: str, shards: int, claimers: int, tries: int) -> None:
    for s in range(shards):
        if design == "today":
            cap = SHARD_SLOTS if shards > 1 else RUN_LIMIT
            item = {"cap": {"N": str(cap)}, "available": {"N": str(cap)}, "holders": {"M": {}}}
        else:
            item = {"free": {"N": str(TXN_SHARD_FREE if shards > 1 else RUN_LIMIT)}}
        client.put_item(TableName=TABLE, Item={**_key(f"LIMIT#hot#{s}", "LIMIT"), **item})
    for c in range(claimers):
        for t in range(tries):
            client.put_item(TableName=TABLE, Item={**_key("RUN#d#r", f"TI#{c}#{t}"), "state": {"S": "scheduled"},
                                                   "pad": {"S": INSTANCE_PAD}})
            if design == "today" and shards > 1:  # the holder's marker item, as a holder's first mark leaves it
                client.put_item(TableName=TABLE, Item={**_key(f"MARK#c{c}t{t}", "MARK"), "marks": {"M": {}}})


# ------------------------------------------------------------------------------------------------------ today
def _today_try(client: Any, rng: random.Random, tally: Tally, shards: int, holder: str, sk: str) -> None:
    token = f"{rng.getrandbits(32):08x}"
    entry = {"L": [{"N": "1"}, {"N": str(int(time.time() * 1000))}, {"S": token}, {"S": holder}]}
    if shards > 1:  # the holder's mark
        client.update_item(TableName=TABLE, Key=_key(f"MARK#{holder}", "MARK"),
                           UpdateExpression="SET marks.#l = :t, expires = :e",
                           ConditionExpression="attribute_not_exists(marks.#l)",
                           ExpressionAttributeNames={"#l": "hot"},
                           ExpressionAttributeValues={":t": {"S": token}, ":e": {"N": "0"}})
        tally.add(requests=1, wcu=1)
    home = rng.randrange(shards)
    while True:
        for step in range(min(FAST_PROBES, shards) if shards > 1 else 1):
            shard = (home + step) % shards
            try:
                client.update_item(
                    TableName=TABLE, Key=_key(f"LIMIT#hot#{shard}", "LIMIT"),
                    UpdateExpression="SET available = available - :one, holders.#h = :entry",
                    ConditionExpression="available >= :one AND size(holders) <= :room "
                                        "AND attribute_not_exists(holders.#h)",
                    ExpressionAttributeNames={"#h": holder},
                    ExpressionAttributeValues={":one": {"N": "1"}, ":entry": entry,
                                               ":room": {"N": str(SHARD_ENTRIES - 1)}},
                    ReturnValuesOnConditionCheckFailure="ALL_OLD")
                tally.add(requests=1, wcu=1)
                break
            except ClientError as e:
                _refused(e)
                tally.add(requests=1, wcu=1, full=1)
        else:  # today: a read of every shard, then wait for room; here: the same probes again after a pause
            pause = rng.uniform(0.0, 0.005)
            time.sleep(pause)
            tally.add(waited=pause)
            home = rng.randrange(shards)
            continue
        break
    client.update_item(TableName=TABLE, Key=_key("RUN#d#r", sk), UpdateExpression="SET #s = :q, placed = :p",
                       ConditionExpression="#s = :sch", ExpressionAttributeNames={"#s": "state"},
                       ExpressionAttributeValues={":q": {"S": "queued"}, ":sch": {"S": "scheduled"},
                                                  ":p": {"N": str(shard)}})
    client.update_item(TableName=TABLE, Key=_key("RUN#d#r", sk), UpdateExpression="SET #s = :done",
                       ConditionExpression="#s = :q", ExpressionAttributeNames={"#s": "state"},
                       ExpressionAttributeValues={":q": {"S": "queued"}, ":done": {"S": "success"}})
    client.update_item(TableName=TABLE, Key=_key(f"LIMIT#hot#{shard}", "LIMIT"),
                       UpdateExpression="SET available = available + holders.#h[0] REMOVE holders.#h",
                       ConditionExpression="attribute_exists(holders.#h)", ExpressionAttributeNames={"#h": holder})
    tally.add(requests=3, wcu=3, tries=1)


def _today(client: Any, rng: random.Random, tally: Tally, shards: int, claimer: int, tries: int,
           batch: int) -> None:
    for t in range(tries):
        _today_try(client, rng, tally, shards, f"c{claimer}t{t}", f"TI#{claimer}#{t}")


# -------------------------------------------------------------------------------------------------------- txn
def _transact(client: Any, rng: random.Random, tally: Tally, items: list[dict[str, Any]]) -> str:
    """Send until it lands or is refused by a condition: 'ok' or 'condition'; conflicts are sent again."""
    wait = 0.005
    while True:
        tally.add(requests=1, wcu=TRANSACTION_WCU * len(items), transactions=1)
        try:
            client.transact_write_items(TransactItems=items)
            return "ok"
        except ClientError as e:
            if _refused(e) == "condition":
                return "condition"
        pause = rng.uniform(0.0, wait)
        time.sleep(pause)
        tally.add(waited=pause)
        wait = min(wait * 2, MAX_BACKOFF_S)


def _counter(shard: int, sign: str, k: int, condition: bool) -> dict[str, Any]:
    update: dict[str, Any] = {"TableName": TABLE, "Key": _key(f"LIMIT#hot#{shard}", "LIMIT"),
                              "UpdateExpression": f"SET #f = #f {sign} :k", "ExpressionAttributeNames": {"#f": "free"},
                              "ExpressionAttributeValues": {":k": {"N": str(k)}}}
    if condition:
        update["ConditionExpression"] = "#f >= :k"
    return {"Update": update}


def _instance(sk: str, before: str, after: str, shard: int) -> dict[str, Any]:
    return {"Update": {"TableName": TABLE, "Key": _key("RUN#d#r", sk), "UpdateExpression": "SET #s = :a, ticket = :t",
                       "ConditionExpression": "#s = :b", "ExpressionAttributeNames": {"#s": "state"},
                       "ExpressionAttributeValues": {":a": {"S": after}, ":b": {"S": before},
                                                     ":t": {"N": str(shard)}}}}


def _txn(client: Any, rng: random.Random, tally: Tally, shards: int, claimer: int, tries: int, batch: int) -> None:
    for start in range(0, tries, batch):
        sks = [f"TI#{claimer}#{t}" for t in range(start, min(start + batch, tries))]
        shard = rng.randrange(shards)
        while _transact(client, rng, tally, [_counter(shard, "-", len(sks), True),
                                             *(_instance(sk, "scheduled", "queued", shard) for sk in sks)]) != "ok":
            tally.add(full=1)
            shard = (shard + 1) % shards
        for sk in sks:
            if _transact(client, rng, tally, [_instance(sk, "queued", "success", shard),
                                              _counter(shard, "+", 1, False)]) != "ok":
                raise AssertionError(f"release of {sk} refused")
            tally.add(tries=1)


# ------------------------------------------------------------------------------------------------------- runs
def run(server: EmbeddedAwsServer, design: str, shards: int, claimers: int, tries: int, batch: int,
        seed: int) -> dict[str, float]:
    server.reset()
    client = _client(server)
    client.create_table(TableName=TABLE, BillingMode="PAY_PER_REQUEST",
                        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                                   {"AttributeName": "sk", "KeyType": "RANGE"}],
                        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                              {"AttributeName": "sk", "AttributeType": "S"}])
    _setup(client, design, shards, claimers, tries)
    assert server.guard.conflicts is not None
    server.guard.conflicts.refused.clear()
    tally = Tally()
    work = _today if design == "today" else _txn
    clients = [_client(server) for _ in range(claimers)]
    errors: list[BaseException] = []
    go = threading.Barrier(claimers + 1)

    def claimer(i: int) -> None:
        go.wait()
        try:
            work(clients[i], random.Random(seed * 100 + i), tally, shards, i, tries, batch)
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=claimer, args=(i,)) for i in range(claimers)]
    for t in threads:
        t.start()
    go.wait()
    began = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - began
    if errors:
        raise errors[0]
    conflicts = sum(server.guard.conflicts.refused.values())
    _check(client, design, shards)
    return {"tries": tally.tries, "requests": tally.requests / tally.tries, "wcu": tally.wcu / tally.tries,
            "conflict_rate": conflicts / tally.transactions if tally.transactions else 0.0,
            "full": tally.full / tally.tries, "tries_per_s": tally.tries / wall,
            "projected_per_s": tally.tries / max(tally.aws_s.values())}


def _check(client: Any, design: str, shards: int) -> None:
    """Every slot is back: the bench's own invariant (a limit that leaks would flatter its figures)."""
    total = 0
    for s in range(shards):
        item = client.get_item(TableName=TABLE, Key=_key(f"LIMIT#hot#{s}", "LIMIT"), ConsistentRead=True)["Item"]
        total += int(item["available" if design == "today" else "free"]["N"])
    size = (SHARD_SLOTS * shards if shards > 1 else RUN_LIMIT) if design == "today" else \
        (TXN_SHARD_FREE * shards if shards > 1 else RUN_LIMIT)
    assert total == size, (design, total, size)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tries", type=int, default=50, help="tries per claimer")
    parser.add_argument("--claimers", default="1,2,4,8")
    parser.add_argument("--shards", default=f"{POOL_SHARDS},1", help="the hot limit's shard counts, one table each")
    parser.add_argument("--designs", default=",".join(DESIGNS))
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    counts = [int(c) for c in args.claimers.split(",")]
    designs = [DESIGNS[d] for d in args.designs.split(",")]
    with EmbeddedAwsServer(concurrent=True, latency=LatencySource(AWS, seed=args.seed)) as server:
        for design, batch in designs:  # warm up (connections, moto's first requests), not reported
            run(server, design, POOL_SHARDS, 2, 4, batch, args.seed)
        for shards in (int(n) for n in args.shards.split(",")):
            label = "a run's limit of 1 shard (size 1,000)" if shards == 1 else \
                f"a limit of {shards} shards (today {shards * SHARD_SLOTS} slots, txn {shards * TXN_SHARD_FREE})"
            print(f"\n### {label}, {args.tries} tries per claimer\n")
            print("| design | claimers | requests/try | WCU/try | conflicts/transaction | full refusals/try "
                  "| tries/s here | on AWS's latency |")
            print("|---|---|---|---|---|---|---|---|")
            for design, batch in designs:
                for claimers in counts:
                    r = run(server, design, shards, claimers, args.tries, batch, args.seed)
                    name = "today (single writes)" if design == "today" else f"txn, batch {batch}"
                    print(f"| {name} | {claimers} | {r['requests']:.2f} | {r['wcu']:.2f} | "
                          f"{r['conflict_rate']:.1%} | {r['full']:.2f} | {r['tries_per_s']:.1f} | "
                          f"{r['projected_per_s']:.0f} |", flush=True)


if __name__ == "__main__":
    main()
