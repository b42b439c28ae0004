"""Holders for the limits tests: task instances of the store, written by its ``transition_item``, and what the
table holds (counters, tickets) read back whole."""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from updraft.limits import Claim, HolderWrite, Need, Table, Ticket
from updraft.local.embedded_aws import serialized_moto
from updraft.model.records import TIKey
from updraft.model.states import TaskInstanceState
from updraft.store import keys
from updraft.store.dynamo import DynamoStore

S = TaskInstanceState
_tries = itertools.count(1)


def scheduled(store: DynamoStore, task_id: str, run_id: str = "r") -> TIKey:
    key = TIKey("d", run_id, task_id)
    assert store.create_ti(key, state=S.SCHEDULED)
    return key


def queue(store: DynamoStore, key: TIKey) -> HolderWrite:
    """The claim's write: scheduled -> queued with a new try."""
    try_id = f"try-{next(_tries)}"
    return lambda ticket, held: store.transition_item(
        key, expected=[S.SCHEDULED], state=S.QUEUED, ticket=ticket, held_ticket=held,
        fields={"try_id": try_id, "try_number": 1})


def end(store: DynamoStore, key: TIKey, state: TaskInstanceState = S.SUCCESS) -> HolderWrite:
    """An end's write: queued or running -> ``state``."""
    return lambda ticket, held: store.transition_item(
        key, expected=[S.QUEUED, S.RUNNING], state=state, ticket=ticket, held_ticket=held)


def claim(store: DynamoStore, key: TIKey, *needs: Need, held: Ticket | None = None) -> Claim:
    return Claim(queue(store, key), tuple(needs), held)


@dataclass(frozen=True)
class Counter:
    size: int | None
    share: int
    free: int


def counters(table: Table, items: list[dict] | None = None) -> dict[str, list[Counter]]:
    """Every limit's counters (in ``items``, or the table's), by the root's pk (index: shard)."""
    found: dict[str, dict[int, Counter]] = defaultdict(dict)
    for item in scan(table) if items is None else items:
        if item["sk"]["S"] != keys.COUNTER_SK:
            continue
        pk = item["pk"]["S"]
        root, _, shard = pk.rpartition("#") if pk.count("#") > 1 else (pk, "", "0")
        found[root][int(shard)] = Counter(int(item["size"]["N"]) if "size" in item else None,
                                          int(item["share"]["N"]), int(item["free"]["N"]))
    return {root: [shards[i] for i in range(len(shards))] for root, shards in found.items()}


def tickets(table: Table, items: list[dict] | None = None) -> dict[str, Ticket]:
    """Every ticket a task instance carries (in ``items``, or the table's), by its sort key."""
    return {item["sk"]["S"]: Ticket.decode(item["ticket"]["S"]) for item in (scan(table) if items is None else items)
            if item["sk"]["S"].startswith(keys.TI_PREFIX) and "ticket" in item}


def scan(table: Table) -> list[dict]:
    items, start = [], {}
    while True:
        page = table.client.scan(TableName=table.name, ConsistentRead=True, **start)
        items += page["Items"]
        if "LastEvaluatedKey" not in page:
            return items
        start = {"ExclusiveStartKey": page["LastEvaluatedKey"]}


def check_accounts(table: Table, within: Collection[str] = ()) -> dict[str, int]:
    """Invariant 1, per shard: ``free = share - held`` where held is the slots every ticket holds on it, and
    the shares sum to the root's size, in one scan (one atomic snapshot on serialized moto, a table this small
    being one page); and the limits ``within`` hold no more than their size. Returns the slots held per limit
    (by root pk)."""
    items = scan(table)
    held: dict[tuple[str, int], int] = defaultdict(int)
    for ticket in tickets(table, items).values():
        for hold in ticket.holds:
            held[keys.limit_pk(hold.limit_id), hold.shard] += hold.slots
    found = counters(table, items)
    for root, shards in found.items():
        assert sum(c.share for c in shards) == shards[0].size, (root, shards)
        for index, counter in enumerate(shards):
            assert counter.free == counter.share - held.get((root, index), 0), (root, index, shards, dict(held))
    assert {root for root, _ in held} <= set(found)
    totals = {root: sum(held.get((root, i), 0) for i in range(len(shards))) for root, shards in found.items()}
    for limit_id in within:
        root = keys.limit_pk(limit_id)
        assert root not in found or totals[root] <= found[root][0].size, (limit_id, totals[root], found[root])
    return totals


class LostAcknowledgement:
    """A client whose first transaction lands but whose answer is lost, so it is sent again, as the SDK does
    after a timeout: the resent copy's answer (with ``RetryAttempts`` 1) is the one returned."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def transact_write_items(self, **kwargs: Any) -> Any:
        with contextlib.suppress(ClientError):  # (its answer lost too)
            self._client.transact_write_items(**kwargs)
        try:
            return self._client.transact_write_items(**kwargs)
        except ClientError as exc:
            exc.response["ResponseMetadata"]["RetryAttempts"] = 1
            raise


def race(table: Table, schedulers: int, scheduler: Callable[[int], None], pool: str) -> list[int]:
    """``scheduler(seed)`` on ``schedulers`` threads at once through serialized moto (one request at a time, a
    transaction atomic), while a monitor checks the accounts (``check_accounts``, one atomic snapshot a scan)
    every 10 ms. Returns the slots of ``pool`` held at each scan; raises the first error of any thread."""
    errors: list[BaseException] = []
    done = threading.Event()
    peaks: list[int] = []

    def guarded(seed: int) -> None:
        try:
            scheduler(seed)
        except BaseException as exc:  # (reported by the test's thread)
            errors.append(exc)

    def monitor() -> None:
        try:
            while not done.is_set():
                peaks.append(check_accounts(table).get(keys.limit_pk(pool), 0))
                time.sleep(0.01)
        except BaseException as exc:
            errors.append(exc)

    with serialized_moto():
        threads = [threading.Thread(target=guarded, args=(seed,)) for seed in range(schedulers)]
        watcher = threading.Thread(target=monitor)
        watcher.start()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        done.set()
        watcher.join()
    assert not errors, errors
    return peaks
