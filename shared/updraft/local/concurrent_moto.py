"""moto served concurrently with DynamoDB's per-item atomicity, optionally with AWS's latency added.

One ``ConcurrentMoto`` guards every request to one moto (in-process through its botocore stubber, or its server's
WSGI app): a DynamoDB request takes the locks of ``item_locks.DynamoItemLocks`` (its item, its partition, or the
whole table), any other service's request one lock shared by them all (S3, SQS and the rest stay one at a time,
as before). With a ``LatencySource``, each DynamoDB request waits a drawn delay, half before moto handles it and
half after (the way there and back), outside every lock: requests to different items then overlap as they do on
DynamoDB, which a single global lock would turn into a queue.

With ``conflicts`` (by default when the latency profile has a ``transaction_window``), DynamoDB's refusals are
emulated (``transaction_conflicts``): a transaction is prepared under its items' locks, stays prepared for its
window (the middle of its latency, outside every lock), then commits under them again; a request meeting a
prepared item is refused as DynamoDB refuses it rather than queued behind it. Counted in ``conflicts.refused``.
"""

from __future__ import annotations

import collections
import contextlib
import io
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from updraft.local import moto_speedups, moto_transactions
from updraft.local.item_locks import TRANSACTIONS, DynamoItemLocks
from updraft.local.journal import DYNAMODB_WRITES
from updraft.local.latency import LatencySource
from updraft.local.moto_transactions import refusing
from updraft.local.transaction_conflicts import WRITES, Transaction, TransactionConflicts

if TYPE_CHECKING:
    from updraft.local.journal import MotoJournalTap

log = logging.getLogger(__name__)

DYNAMODB_TARGET = "DynamoDB_20120810."


def moto_key_schema(table: str) -> tuple[str, str | None] | None:
    """The partition and sort key names of ``table`` in moto's DynamoDB (any account and region), or None."""
    from moto.dynamodb.models import dynamodb_backends

    for account in list(dict.values(dynamodb_backends)):
        for backend in list(dict.values(account)):
            found = backend.tables.get(table)
            if found is not None:
                return found.hash_key_attr, found.range_key_attr
    return None


class ConcurrentMoto:
    def __init__(self, latency: LatencySource | None = None, *, serialize: bool = False,
                 lock: contextlib.AbstractContextManager[Any] | None = None, conflicts: bool | None = None) -> None:
        # A Query of one partition may run beside writes to others only if moto walks that partition alone.
        moto_speedups.apply()
        # A transaction may run beside writes to other items of its tables only if its rollback is item-local.
        moto_transactions.apply()
        self.latency = latency
        window = latency.profile.transaction_window if latency is not None else None
        self.window = window or 0.0
        self.conflicts = TransactionConflicts() if (window is not None if conflicts is None else conflicts) \
            else None
        self.serialize = serialize  # one request at a time, every service (what local mode has always done)
        self.items = DynamoItemLocks(moto_key_schema)
        # Requests other than DynamoDB's (all of them with ``serialize``); ``lock``: one shared with another guard
        # of the same moto (``updraft dags test`` serves its in-process moto over HTTP too).
        self._others = lock if lock is not None else threading.RLock()
        # Time requests spent waiting for their locks, by operation (where concurrency was lost).
        self.lock_waits: dict[str, float] = collections.defaultdict(float)
        self._count_lock = threading.Lock()
        self.counts: collections.Counter[str] = collections.Counter()
        # Journals what each write left, inside its locks and before it is answered (``--state-dir``).
        self.tap: MotoJournalTap | None = None

    def handle(self, target: str, body: bytes, call: Callable[[], Any]) -> Any:
        """Run ``call`` (moto handling one request) under the locks the request needs."""
        operation = target[len(DYNAMODB_TARGET):] if target.startswith(DYNAMODB_TARGET) else ""
        with self._count_lock:
            self.counts[operation or "other"] += 1
        if not operation:
            with self._waited(self._others, "other"):
                return call()
        try:
            parsed = json.loads(body or b"{}")
        except ValueError:
            parsed = {}
        if not isinstance(parsed, dict):
            parsed = {}
        delay = self.latency.dynamo(operation) if self.latency else 0.0
        items = self.items.transaction_items(parsed) if operation in TRANSACTIONS else None
        if self.conflicts is not None and items is not None:
            return self._transaction(operation, parsed, items, delay, call)
        if delay:
            time.sleep(delay / 2)
        with self._waited(self._lock(operation, parsed), operation):
            refusal = None
            if self.conflicts is not None and operation in WRITES:
                item = self.items.item_of(operation, parsed)
                refusal = self.conflicts.write(operation, item) if item is not None else None
            result = self._call(operation, parsed, call, refusal)
        if delay:
            time.sleep(delay / 2)
        return result

    def _lock(self, operation: str, parsed: dict[str, Any]) -> contextlib.AbstractContextManager[Any]:
        return self._others if self.serialize else self.items.hold(operation, parsed)

    def _call(self, operation: str, parsed: dict[str, Any], call: Callable[[], Any],
              refusal: Exception | None) -> Any:
        """moto handles the request (or answers ``refusal``) and the write is journaled, inside its locks."""
        with refusing(refusal), moto_speedups.serving_alone() if self.serialize else contextlib.nullcontext():
            result = call()
        if refusal is None and self.tap is not None and operation in DYNAMODB_WRITES:
            self._journal(self.tap.dynamodb, operation, parsed)
        return result

    def _transaction(self, operation: str, parsed: dict[str, Any], items: list[Any], delay: float,
                     call: Callable[[], Any]) -> Any:
        """A transaction as DynamoDB runs it: prepared, its window, committed (see the module docstring)."""
        assert self.conflicts is not None
        window = delay * self.window
        edge = (delay - window) / 2
        time.sleep(edge)
        transaction: Transaction | Exception | None = None
        try:
            with self._waited(self._lock(operation, parsed), operation):
                transaction = self.conflicts.begin(operation, items)
                if isinstance(transaction, Exception):
                    result = self._call(operation, parsed, call, transaction)
            if not isinstance(transaction, Exception):
                time.sleep(window)
                with self._waited(self._lock(operation, parsed), operation):
                    refusal, transaction = self.conflicts.end(operation, transaction), None
                    result = self._call(operation, parsed, call, refusal)
        finally:
            if isinstance(transaction, Transaction):  # interrupted while prepared: it leaves
                self.conflicts.end(operation, transaction)
        time.sleep(edge)
        return result

    @contextlib.contextmanager
    def _waited(self, lock: contextlib.AbstractContextManager[Any], operation: str) -> Iterator[None]:
        asked = time.perf_counter()
        with lock:
            waited = time.perf_counter() - asked
            with self._count_lock:
                self.lock_waits[operation] += waited
            yield

    @staticmethod
    def _journal(tap: Callable[..., None], *args: Any) -> None:
        try:
            tap(*args)
        except Exception:  # the write stands (moto made it); only its journal line is missing
            log.exception("local mode: journaling a write failed")

    def take_counts(self) -> collections.Counter[str]:
        with self._count_lock:
            counts, self.counts = self.counts, collections.Counter()
        return counts

    @contextlib.contextmanager
    def in_process(self) -> Iterator[ConcurrentMoto]:
        """Guard in-process moto (``mock_aws``) for the block: its stubber's ``__call__`` is swapped on the class,
        as ``embedded_aws.serialized_moto`` does, and restored after."""
        from moto.core import botocore_stubber

        original = botocore_stubber.BotocoreStubber.__call__
        guard = self

        def guarded(stub: Any, event_name: str, request: Any, **kwargs: Any) -> Any:
            target = request.headers.get("X-Amz-Target", b"")
            target = target.decode() if isinstance(target, bytes) else str(target)
            body = request.body if isinstance(request.body, bytes) else (request.body or "").encode()
            return guard.handle(target, body, lambda: original(stub, event_name, request, **kwargs))

        botocore_stubber.BotocoreStubber.__call__ = guarded  # type: ignore[method-assign,assignment]
        try:
            yield self
        finally:
            botocore_stubber.BotocoreStubber.__call__ = original  # type: ignore[method-assign]

    def wsgi(self, inner: Callable[..., Any]) -> Callable[[dict[str, Any], Any], list[bytes]]:
        """moto's server app guarded likewise: the body is read here (to find the item) and handed on."""

        def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
            if environ.get("PATH_INFO", "").startswith("/moto-api/"):  # reset, state: every service at once
                with self._others, self.items.all_tables():
                    return list(inner(environ, start_response))
            target = environ.get("HTTP_X_AMZ_TARGET", "")
            if not target.startswith(DYNAMODB_TARGET):
                def other() -> list[bytes]:
                    response = list(inner(environ, start_response))
                    if self.tap is not None:  # WSGI's PATH_INFO is decoded, its bytes as latin-1
                        path = environ.get("PATH_INFO", "").encode("latin-1").decode("utf-8", "replace")
                        self._journal(self.tap.s3, environ.get("REQUEST_METHOD", ""), path)
                    return response

                return self.handle("", b"", other)  # type: ignore[no-any-return]
            length = int(environ.get("CONTENT_LENGTH") or 0)
            body = environ["wsgi.input"].read(length) if length else b""
            environ["wsgi.input"] = io.BytesIO(body)
            return self.handle(target, body, lambda: list(inner(environ, start_response)))  # type: ignore[no-any-return]

        return app
