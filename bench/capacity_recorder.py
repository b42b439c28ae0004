"""Every AWS request a scenario makes on the embedded AWS, charged by DynamoDB's published rules.

moto offers no hook around a request, so (like ``updraft.local.embedded_aws.serialized_moto``) its stubber's
``__call__`` is wrapped: requests go one at a time, and for each DynamoDB request the item is read from moto's
backend before and after it, so a write is charged for the larger of the two (a failed condition included), and
each secondary index for what the write changed in it. Reads are charged for what they touched: GetItem for the
whole item (a projection does not reduce it), a Query for the sum of the items (or index entries) it returned.
A ``TransactWriteItems`` is charged item by item at twice a write's units (DynamoDB prepares and commits each
item), a ``ConditionCheck`` item too; a cancelled transaction is charged as if it landed (an assumption, as a
failed condition is charged), and its index writes at a plain write's units.
Each request is tagged with the role the scenario says is running (``scheduler`` or ``worker``), for the Lambda
model, and with its call site (the store method and the scheduling or runtime function that called it; requests
that Updraft sends at once from its thread pool keep the role and caller of the thread that sent them).
"""

from __future__ import annotations

import collections
import json
import os
import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from bench.dynamo_units import Index, index_entry, index_writes, item_size, read_units, write_units

_role = threading.local()
_UPDRAFT = f"{os.sep}updraft{os.sep}"


@contextmanager
def role(name: str) -> Iterator[None]:
    """Requests made in this block (this thread) are charged to ``name``."""
    saved = getattr(_role, "name", "scheduler")
    _role.name = name
    try:
        yield
    finally:
        _role.name = saved


@dataclass
class Charge:
    """One request: its operation, the partition key it landed on, and what it cost."""

    operation: str
    partition: str
    role: str
    read_units: float = 0.0
    write_units: float = 0.0
    item_bytes: int = 0  # the largest item (before or after) a write touched, or the bytes a read returned
    index_units: list[tuple[str, str, int]] = field(default_factory=list)  # (index, index partition, units)
    site: str = ""  # "store_module.method < caller_module.function"
    request: bool = True  # False for a batch's second and later items: one request, charged item by item


# A transaction's items cost twice a single write's units (DynamoDB's pricing: prepare and commit).
TRANSACTION_FACTOR = 2


def _frames() -> list[tuple[str, str]]:
    """(module, function) of this thread's Updraft frames, innermost first."""
    out = []
    frame = sys._getframe(1)
    while frame is not None:
        path = frame.f_code.co_filename
        if _UPDRAFT in path:
            parts = path.split(_UPDRAFT)[-1].removesuffix(".py").split("/")
            out.append(("/".join(parts), frame.f_code.co_name))
        frame = frame.f_back
    return out


def _caller(frames: list[tuple[str, str]]) -> str:
    """The innermost Updraft function outside the store and the thread pool: who asked for the request."""
    for module, function in frames:
        if not module.startswith("store/") and module != "scheduling/concurrent_writes":
            return f"{module.split('/')[-1]}.{function}"
    return getattr(_role, "caller", "")


def call_site() -> str:
    frames = _frames()
    store = [f"{m.split('/')[-1]}.{f}" for m, f in frames if m.startswith("store/")]
    return f"{store[-1] if store else '?'} < {_caller(frames) or '?'}"


class _Propagating:
    """Updraft's request thread pool, sending each call with the role and caller of the thread that submitted it."""

    def __init__(self, pool: Any) -> None:
        self.pool = pool

    def submit(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        name, caller = getattr(_role, "name", "scheduler"), _caller(_frames())

        def sent() -> Any:
            saved = getattr(_role, "caller", "")
            _role.caller = caller
            try:
                with role(name):
                    return fn(*args, **kwargs)
            finally:
                _role.caller = saved

        return self.pool.submit(sent)


def _table_indexes() -> tuple[tuple[str, ...], list[Index]]:
    from updraft.store.tables import TABLE

    keys = (TABLE.partition_key.name, TABLE.sort_key.name)
    indexes = [Index(ix.name, ix.partition_key.name, ix.sort_key.name, ix.projection) for ix in TABLE.global_indexes]
    indexes += [Index(ix.name, ix.partition_key.name, ix.sort_key.name, ix.projection, local=True)
                for ix in TABLE.local_indexes]
    return keys, indexes


class CapacityRecorder:
    """Wraps moto's stubber while in use; ``charges`` holds one :class:`Charge` per request (a batch's items
    each get their own)."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.charges: list[Charge] = []
        self.other_requests: collections.Counter[str] = collections.Counter()  # S3, SQS, Lambda... by service
        self.table_keys, self.indexes = _table_indexes()

    @contextmanager
    def recording(self) -> Iterator[CapacityRecorder]:
        from moto.core import botocore_stubber

        original = botocore_stubber.BotocoreStubber.__call__
        recorder = self

        def recorded(stub: Any, event_name: str, request: Any, **kwargs: Any) -> Any:
            with recorder.lock:
                target = request.headers.get("X-Amz-Target", b"")
                target = target.decode() if isinstance(target, bytes) else str(target or "")
                if not target.startswith("DynamoDB_"):
                    recorder.other_requests[urlparse(request.url).hostname.split(".")[0]] += 1
                    return original(stub, event_name, request, **kwargs)
                return recorder._dynamodb(target.split(".")[-1], request,
                                          lambda: original(stub, event_name, request, **kwargs))

        from updraft.scheduling import concurrent_writes

        pool = concurrent_writes._pool
        botocore_stubber.BotocoreStubber.__call__ = recorded
        concurrent_writes._pool = lambda: _Propagating(pool())  # type: ignore[assignment]
        try:
            yield self
        finally:
            botocore_stubber.BotocoreStubber.__call__ = original
            concurrent_writes._pool = pool  # type: ignore[assignment]

    def take(self) -> list[Charge]:
        with self.lock:
            charges, self.charges = self.charges, []
        return charges

    # -- DynamoDB -------------------------------------------------------------------------------------------------

    def _backend(self, request: Any) -> Any:
        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.dynamodb.models import dynamodb_backends

        region = urlparse(request.url).hostname.split(".")[1]
        return dynamodb_backends[DEFAULT_ACCOUNT_ID][region]

    def _item(self, backend: Any, table: str, key: dict[str, Any]) -> dict[str, Any] | None:
        found = backend.get_item(table, {name: key[name] for name in self.table_keys})
        return found.to_json()["Attributes"] if found is not None else None

    def _dynamodb(self, operation: str, request: Any, send: Any) -> Any:
        first = len(self.charges)
        try:
            return self._dynamodb_charged(operation, request, send)
        finally:
            site = call_site()
            for n, charge in enumerate(self.charges[first:]):
                charge.site, charge.request = site, n == 0

    def _dynamodb_charged(self, operation: str, request: Any, send: Any) -> Any:
        body = json.loads(request.body or b"{}")
        backend = self._backend(request)
        who = getattr(_role, "name", "scheduler")
        if operation in ("PutItem", "UpdateItem", "DeleteItem"):
            key = body["Item"] if operation == "PutItem" else body["Key"]
            before = self._item(backend, body["TableName"], key)
            response = send()
            self._charge_write(operation, who, before, self._item(backend, body["TableName"], key))
            return response
        if operation == "BatchWriteItem":
            keyed = [(table, (r.get("PutRequest") or {}).get("Item") or r["DeleteRequest"]["Key"])
                     for table, requests in body["RequestItems"].items() for r in requests]
            before_items = [self._item(backend, table, key) for table, key in keyed]
            response = send()
            for (table, key), before in zip(keyed, before_items, strict=True):
                self._charge_write(operation, who, before, self._item(backend, table, key))
            return response
        if operation == "TransactWriteItems":
            keyed = [(spec["TableName"], spec["Item"] if kind == "Put" else spec["Key"])
                     for entry in body["TransactItems"] for kind, spec in entry.items()]
            before_items = [self._item(backend, table, key) for table, key in keyed]
            try:
                return send()
            finally:  # landed or cancelled (moto may answer a cancellation by raising): each item charged
                for (table, key), before in zip(keyed, before_items, strict=True):
                    self._charge_write(operation, who, before, self._item(backend, table, key),
                                       factor=TRANSACTION_FACTOR, key=key)
        if operation == "GetItem":
            size = item_size(self._item(backend, body["TableName"], body["Key"]))
            self.charges.append(Charge(operation, self._partition(body["Key"]), who, item_bytes=size,
                                       read_units=read_units(size, consistent=bool(body.get("ConsistentRead")))))
            return send()
        if operation == "BatchGetItem":  # each item is rounded up on its own
            for table, spec in body["RequestItems"].items():
                for key in spec["Keys"]:
                    item = self._item(backend, table, key)
                    self.charges.append(Charge(operation, self._partition(key), who, item_bytes=item_size(item),
                                               read_units=read_units(item_size(item),
                                                                     consistent=bool(spec.get("ConsistentRead")))))
            return send()
        if operation == "Query":
            response = send()
            self._charge_query(body, json.loads(response.content or b"{}"), backend, who)
            return response
        self.charges.append(Charge(operation, "-", who))  # control plane (CreateTable, DescribeTable): no units
        return send()

    def _partition(self, item: dict[str, Any]) -> str:
        return str(next(iter(item[self.table_keys[0]].values())))

    def _charge_write(self, operation: str, who: str, before: dict | None, after: dict | None,
                      factor: int = 1, key: dict[str, Any] | None = None) -> None:
        present = after if after is not None else before
        if present is None:  # a write of nothing (a delete, a refused transaction): one unit, on the key it named
            self.charges.append(Charge(operation, self._partition(key) if key else "?", who, write_units=factor))
            return
        partition = self._partition(present)
        charge = Charge(operation, partition, who,
                        write_units=factor * write_units(item_size(before), item_size(after)),
                        item_bytes=max(item_size(before), item_size(after)))
        for index in self.indexes:
            for write in index_writes(before, after, index, self.table_keys):
                # A local index lives with the table's partition; a global one on its own partition key.
                charge.index_units.append((index.name, partition if index.local else f"{index.name}:{write.partition}",
                                           write.units))
        self.charges.append(charge)

    def _charge_query(self, body: dict[str, Any], response: dict[str, Any], backend: Any, who: str) -> None:
        index = next((ix for ix in self.indexes if ix.name == body.get("IndexName")), None)
        partition_name = index.partition_key if index is not None else self.table_keys[0]
        names = body.get("ExpressionAttributeNames", {})
        values = body.get("ExpressionAttributeValues", {})
        partition = "?"
        for placeholder, value in re.findall(r"(#?\w+)\s*=\s*(:\w+)", body.get("KeyConditionExpression", "")):
            if names.get(placeholder, placeholder) == partition_name:
                partition = str(next(iter(values[value].values())))
        total = 0
        projected = "ProjectionExpression" in body or "AttributesToGet" in body
        for returned in response.get("Items", []):
            whole = returned
            if projected:  # the charge is for the whole item (or index entry), whatever the request projected
                whole = self._item(backend, body["TableName"], returned)
                if index is not None and not index.local:
                    whole = index_entry(whole, index, self.table_keys)
            total += item_size(whole)
        consistent = bool(body.get("ConsistentRead"))
        self.charges.append(Charge("Query", f"{body.get('IndexName') or 'table'}:{partition}"
                                   if index is not None and not index.local else partition, who,
                                   read_units=read_units(total, consistent=consistent), item_bytes=total))
