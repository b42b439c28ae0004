"""moto's DynamoDB transactions made item-local, and the refusals DynamoDB answers while a transaction is going on.

**Rollback.** moto 5.2's ``transact_write_items`` deep-copies every table a transaction names before it starts
and, when the transaction is cancelled, puts the copies back in place of the tables. That is correct only while
nothing else touches those tables, which is why ``item_locks`` once held every table exclusive for a transaction:
a write to another item of the table, made meanwhile, would be undone by the restore (and the copy costs the whole
table, however few items the transaction names). Here each transaction keeps a journal of the items it names (a
copy of each as it was, or "absent") and, when moto cancels it, puts those items back; moto's own whole-table copy
is skipped (the table itself stands in for its copy, so moto's restore assigns the same table back). A
transaction then needs only its own items held (``item_locks``), and a cancelled one changed nothing (stream
records moto made for its writes stay: Updraft's table has no stream).

**Refusals.** DynamoDB does not queue a request behind a transaction: a request that meets an item a transaction
is writing is refused (``transaction_conflicts`` decides when). ``refusing(error)`` makes the request this thread
is about to hand to moto answer ``error`` instead, in moto's own error format (in-process and server alike):
``transaction_conflict()`` for a single-item write, ``transaction_cancelled(...)`` for a transaction.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

_lock = threading.Lock()
_applied = False
_local = threading.local()  # .journal: the transaction this thread runs in moto; .refusal: what to answer instead

# The message DynamoDB gives both for a refused single-item write and for a transaction's conflicting item.
CONFLICT_MESSAGE = "Transaction is ongoing for the item"
REFUSED_ACTIONS = ("put_item", "update_item", "delete_item", "transact_write_items", "transact_get_items")


def transaction_conflict() -> Exception:
    """What DynamoDB answers a PutItem, UpdateItem or DeleteItem on an item a transaction is writing."""
    from moto.dynamodb.exceptions import ERROR_TYPE_PREFIX, DynamodbException

    return DynamodbException(ERROR_TYPE_PREFIX + "TransactionConflictException", CONFLICT_MESSAGE)


def transaction_cancelled(actions: int, conflicting: Sequence[int]) -> Exception:
    """A transaction of ``actions`` items cancelled because the ones at ``conflicting`` are in another transaction:
    ``TransactionCanceledException`` with one reason per item, in request order (``TransactionConflict`` for those,
    ``None`` for the rest), as DynamoDB gives it."""
    from moto.dynamodb.exceptions import TransactionCanceledException

    return TransactionCanceledException([("TransactionConflict", CONFLICT_MESSAGE, None) if i in conflicting
                                         else (None, None, None) for i in range(actions)])


@contextlib.contextmanager
def refusing(error: Exception | None) -> Iterator[None]:
    """The DynamoDB request this thread hands moto in the block is answered ``error`` (None: handled as usual)."""
    _local.refusal = error
    try:
        yield
    finally:
        _local.refusal = None


def apply() -> None:
    """Patch moto once per process (idempotent)."""
    global _applied
    with _lock:
        if _applied:
            return
        from moto.dynamodb import models
        from moto.dynamodb.models import DynamoDBBackend
        from moto.dynamodb.models.table import Table
        from moto.dynamodb.responses import DynamoHandler

        original = DynamoDBBackend.transact_write_items

        def transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> None:
            journal = _journal(self, transact_items)
            _local.journal = journal
            try:
                original(self, transact_items)
            except BaseException:
                for table, hash_key, range_key, item in reversed(journal):
                    _restore(table, hash_key, range_key, item)
                raise
            finally:
                _local.journal = None

        class _TablesKept:
            """``copy`` as moto's backend module sees it: a table inside a journaled transaction is its own
            copy (the journal, not the copy, undoes a cancelled transaction); everything else is copied."""

            def __getattr__(self, name: str) -> Any:
                return getattr(copy, name)

            @staticmethod
            def deepcopy(value: Any, memo: dict[int, Any] | None = None) -> Any:
                if isinstance(value, Table) and getattr(_local, "journal", None) is not None:
                    return value
                return copy.deepcopy(value, memo)

        DynamoDBBackend.transact_write_items = transact_write_items  # type: ignore[method-assign]
        models.copy = _TablesKept()  # type: ignore[assignment]
        for action in REFUSED_ACTIONS:
            setattr(DynamoHandler, action, _refusable(getattr(DynamoHandler, action)))
        _applied = True


def _refusable(handle: Callable[[Any], Any]) -> Callable[[Any], Any]:
    @functools.wraps(handle)
    def refusable(self: Any) -> Any:
        refusal = getattr(_local, "refusal", None)
        if refusal is not None:
            raise refusal  # inside moto's action: it answers the error as it answers its own
        return handle(self)

    return refusable


def _journal(backend: Any, transact_items: list[dict[str, Any]]) -> list[tuple[Any, Any, Any, Any]]:
    """(table, hash key, range key, a copy of the item or None) for every item a transaction may write. An action
    moto will refuse (unknown table, a malformed key) is left out: moto writes nothing for it."""
    journal = []
    for entry in transact_items:
        kind, action = next(iter(entry.items()))
        if kind not in ("Put", "Update", "Delete"):
            continue
        table = backend.tables.get(action.get("TableName"))
        if table is None:
            continue
        key = action.get("Item") if kind == "Put" else action.get("Key")
        try:
            hash_key, range_key = backend.get_keys_value(table, key or {})
        except Exception:  # moto refuses the same key when it reaches the action
            continue
        journal.append((table, hash_key, range_key, copy.deepcopy(table.get_item(hash_key, range_key))))
    return journal


def _restore(table: Any, hash_key: Any, range_key: Any, item: Any) -> None:
    """Put one item back as the journal copied it (None: it did not exist), straight into moto's item dicts."""
    if range_key is None:
        if item is None:
            table.items.pop(hash_key, None)
        else:
            table.items[hash_key] = item
    elif item is None:
        partition = dict.get(table.items, hash_key)
        if partition is not None:
            partition.pop(range_key, None)
    else:
        table.items[hash_key][range_key] = item
