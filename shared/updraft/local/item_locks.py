"""Per-item atomicity for moto's DynamoDB, so requests to different items run at the same time.

Real DynamoDB makes each single-item request atomic (a conditional write checks and writes as one step) and
serves different items in parallel. moto has no locking at all, so the embedded AWS has so far let one request in
at a time (``embedded_aws.serialized_moto``, ``moto_server``): correct, but a request that waits (the latency of
``latency.LatencyProfile``, a slow response) holds up every other one, and N schedulers can only ever be as fast
as one. Here each request takes only the locks its own atomicity needs, always in the order table -> partition
-> item (so no two requests can deadlock):

- GetItem, PutItem, UpdateItem, DeleteItem: the table and the item's partition shared, the item exclusive.
  moto reads and writes the item in place, and inserts into the partition's dict (atomic under the GIL);
- Query on the table's own key: the table shared, the partition exclusive (no item of it half-written while the
  Query reads them, as DynamoDB returns each item whole);
- TransactWriteItems, TransactGetItems: every item they name, as a single-item request holds one (each table
  shared, each partition shared, each item exclusive), all taken in one order: tables by name, within a table
  its partitions in key order, each partition's items after it in key order. Every request takes its locks
  along that same order, so two transactions over the same items, or a transaction and a single-item request,
  wait for each other and never deadlock. A cancelled transaction puts back only its own items
  (``moto_transactions``), and a Query or Scan, which waits for the partition or the table, never sees a
  transaction half-written;
- everything else (Query on an index, Scan, batches, table operations, a transaction naming a table or key not
  known here): the table exclusive (all tables for those that name none), as moto walks every item of the table
  for them (a dict that grows while it is walked would raise).

A key's lock exists while a request holds or waits for it (``KeyedLocks``), so memory stays bounded by the
requests in flight however many items exist, and two different items never wait for each other.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

L = TypeVar("L")

ITEM_OPERATIONS = frozenset({"GetItem", "PutItem", "UpdateItem", "DeleteItem"})
TRANSACTIONS = frozenset({"TransactWriteItems", "TransactGetItems"})

# One item of a transaction: (table, partition, item), the partition and item as ``_canonical`` strings.
ItemKey = tuple[str, str, str]


class ReadWriteLock:
    """Many shared holders or one exclusive holder; a waiting exclusive request stops new shared ones (so a Scan
    is not starved by a stream of item requests)."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._readers = 0
        self._writer = False
        self._writers_waiting = 0

    @contextlib.contextmanager
    def shared(self) -> Iterator[None]:
        with self._cond:
            while self._writer or self._writers_waiting:
                self._cond.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                if not self._readers:
                    self._cond.notify_all()

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        with self._cond:
            self._writers_waiting += 1
            while self._writer or self._readers:
                self._cond.wait()
            self._writers_waiting -= 1
            self._writer = True
        try:
            yield
        finally:
            with self._cond:
                self._writer = False
                self._cond.notify_all()


class KeyedLocks(Generic[L]):
    """One lock per key, made when a request first asks for it and dropped when the last one lets it go."""

    def __init__(self, make: Callable[[], L]) -> None:
        self._make = make
        self._guard = threading.Lock()
        self._locks: dict[str, tuple[L, int]] = {}

    @contextlib.contextmanager
    def get(self, key: str) -> Iterator[L]:
        with self._guard:
            lock, users = self._locks.get(key) or (self._make(), 0)
            self._locks[key] = (lock, users + 1)
        try:
            yield lock
        finally:
            with self._guard:
                users = self._locks[key][1] - 1
                if users:
                    self._locks[key] = (lock, users)
                else:
                    del self._locks[key]


class _TableLocks:
    def __init__(self) -> None:
        self.table = ReadWriteLock()
        self.partitions: KeyedLocks[ReadWriteLock] = KeyedLocks(ReadWriteLock)
        self.items: KeyedLocks[threading.Lock] = KeyedLocks(threading.Lock)


# A table's key attribute names (partition key, sort key or None), or None when the table is unknown.
KeySchemaLookup = Callable[[str], "tuple[str, str | None] | None"]


class DynamoItemLocks:
    """The locks of one embedded DynamoDB: ``hold(operation, body)`` around moto's handling of the request."""

    def __init__(self, key_schema: KeySchemaLookup) -> None:
        self._key_schema = key_schema
        self._tables: dict[str, _TableLocks] = {}
        self._guard = threading.Lock()

    def _locks(self, table: str) -> _TableLocks:
        with self._guard:
            locks = self._tables.get(table)
            if locks is None:
                locks = self._tables[table] = _TableLocks()
            return locks

    @contextlib.contextmanager
    def hold(self, operation: str, body: dict[str, Any]) -> Iterator[None]:
        if operation in TRANSACTIONS:
            items = self.transaction_items(body)
            if items is not None:
                with self.items_of(items):
                    yield
                return
        table = body.get("TableName")
        if not isinstance(table, str):  # batches, ListTables, an unknown transaction: every table
            with self.all_tables():
                yield
            return
        locks = self._locks(table)
        key = self._key(operation, table, body)
        if key is None:
            with locks.table.exclusive():
                yield
            return
        partition, item = key
        with locks.table.shared(), locks.partitions.get(partition) as partition_lock:
            if item is None:  # a Query of one partition
                with partition_lock.exclusive():
                    yield
                return
            with partition_lock.shared(), locks.items.get(item) as item_lock, item_lock:
                yield

    @contextlib.contextmanager
    def items_of(self, items: list[ItemKey]) -> Iterator[None]:
        """Several items held at once, in the global order (see the module docstring)."""
        with contextlib.ExitStack() as stack:
            table = partition = None
            locks: _TableLocks | None = None
            partition_lock: ReadWriteLock | None = None
            for key in sorted(set(items)):
                if key[0] != table:
                    table, partition = key[0], None
                    locks = self._locks(table)
                    stack.enter_context(locks.table.shared())
                assert locks is not None
                if key[1] != partition:
                    partition = key[1]
                    partition_lock = stack.enter_context(locks.partitions.get(partition))
                    stack.enter_context(partition_lock.shared())
                stack.enter_context(stack.enter_context(locks.items.get(key[2])))
            yield

    def transaction_items(self, body: dict[str, Any]) -> list[ItemKey] | None:
        """The (table, partition, item) of each action of a transaction, in request order; None when one names a
        table not known here or carries no key (moto refuses it: the transaction then holds every table)."""
        found = []
        for entry in body.get("TransactItems") or []:
            action = next(iter(entry.values()), None) if isinstance(entry, dict) and len(entry) == 1 else None
            if not isinstance(action, dict) or not isinstance(action.get("TableName"), str):
                return None
            table = action["TableName"]
            key = self._item_key(table, action.get("Item") if "Put" in entry else action.get("Key"))
            if key is None:
                return None
            found.append((table, *key))
        return found or None

    def item_of(self, operation: str, body: dict[str, Any]) -> ItemKey | None:
        """The (table, partition, item) a single-item request names, or None."""
        table = body.get("TableName")
        key = self._item_key(table, body.get("Item" if operation == "PutItem" else "Key")) \
            if operation in ITEM_OPERATIONS and isinstance(table, str) else None
        return None if key is None else (table, *key)  # type: ignore[return-value]

    def _item_key(self, table: str, key: Any) -> tuple[str, str] | None:
        """(partition, item) of the item ``key`` (a key or a whole item) names in ``table``, or None."""
        schema = self._key_schema(table)
        if schema is None or not isinstance(key, dict) or schema[0] not in key:
            return None
        pk, sk = schema
        partition = _canonical(key[pk])
        return partition, partition + "\x00" + (_canonical(key.get(sk)) if sk else "")

    def _key(self, operation: str, table: str, body: dict[str, Any]) -> tuple[str, str | None] | None:
        """(partition, item) for an item request, (partition, None) for a Query of one partition on the table's
        own key, None for what must hold the whole table."""
        if operation in ITEM_OPERATIONS:  # None: moto will refuse it; hold the table meanwhile
            return self._item_key(table, body.get("Item" if operation == "PutItem" else "Key"))
        schema = self._key_schema(table)
        if schema is None:
            return None
        pk = schema[0]
        if operation == "Query" and "IndexName" not in body:
            value = _queried_partition(body, pk)
            return None if value is None else (_canonical(value), None)
        return None

    @contextlib.contextmanager
    def all_tables(self) -> Iterator[None]:
        """Every table known so far, exclusive, in name order (one order for all callers: no deadlock)."""
        with self._guard:
            tables = [self._tables[name] for name in sorted(self._tables)]
        with contextlib.ExitStack() as stack:
            for locks in tables:
                stack.enter_context(locks.table.exclusive())
            yield


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _queried_partition(body: dict[str, Any], pk: str) -> Any:
    """The partition key value a Query names (``#n = :v`` or ``pk = :v`` in its key condition), or None."""
    names = {v: k for k, v in (body.get("ExpressionAttributeNames") or {}).items()}
    alias = names.get(pk, pk)
    condition = body.get("KeyConditionExpression") or ""
    values = body.get("ExpressionAttributeValues") or {}
    for part in re.split(r"\s+and\s+", condition.replace("(", " ").replace(")", " "), flags=re.IGNORECASE):
        left, sep, right = part.partition("=")
        if sep and left.strip() == alias and right.strip() in values:
            return values[right.strip()]
    legacy = (body.get("KeyConditions") or {}).get(pk)
    if legacy and legacy.get("ComparisonOperator") == "EQ":
        return legacy["AttributeValueList"][0]
    return None
