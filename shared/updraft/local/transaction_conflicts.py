"""DynamoDB's transaction conflicts, for the embedded AWS: who is refused while a transaction is going on.

DynamoDB does not queue a request behind a transaction. A transaction prepares its items (each one checked and
marked as in the transaction), then commits them; between the two, per AWS's documentation ("Transaction conflict
handling in DynamoDB", and ``TransactionCanceledException`` in the API reference):

- a PutItem, UpdateItem or DeleteItem of an item in an ongoing TransactWriteItems fails with
  ``TransactionConflictException`` ("Transaction is ongoing for the item");
- a TransactWriteItems naming an item in another ongoing TransactWriteItems is cancelled:
  ``TransactionCanceledException``, reason ``TransactionConflict`` for that item, ``None`` for the others;
- a TransactGetItems naming an item in an ongoing TransactWriteItems is cancelled the same way, and an ongoing
  TransactGetItems whose item a PutItem, UpdateItem, DeleteItem or TransactWriteItems writes meanwhile is the one
  cancelled (the write goes through);
- GetItem, Query and Scan never conflict: they read the item as last committed. Two TransactGetItems do not
  conflict with each other.

``ConcurrentMoto`` (with ``conflicts``) runs a transaction in two steps, each under the locks of its items
(``item_locks``): ``begin`` (the prepare: refused if an item is taken, else every item marked), then, after the
part of the transaction's latency its items stay prepared (``LatencyProfile.transaction_window``), ``end`` and
moto's handling of it (the commit). A single-item write asks ``write`` under its item's lock. Single-item writes
are atomic at one instant here (they have no window), so a TransactGetItems is cancelled only by writes that land
while it is prepared; BatchWriteItem and PartiQL are not refused (Updraft's claims use neither with transactions).
"""

from __future__ import annotations

import collections
import threading
from dataclasses import dataclass, field

from updraft.local.item_locks import ItemKey
from updraft.local.moto_transactions import transaction_cancelled, transaction_conflict

WRITES = frozenset({"PutItem", "UpdateItem", "DeleteItem"})


@dataclass
class Transaction:
    """One prepared transaction: its items in request order; for a read, the positions of those a write has
    changed since it was prepared."""

    writes: bool
    items: list[ItemKey]
    spoiled: set[int] = field(default_factory=set)


class TransactionConflicts:
    """The items of the transactions in progress on one embedded DynamoDB, and the refusals they cause."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._open: dict[ItemKey, list[Transaction]] = collections.defaultdict(list)
        self.refused: collections.Counter[str] = collections.Counter()  # refusals, by operation

    def begin(self, operation: str, items: list[ItemKey]) -> Transaction | Exception:
        """Prepare a transaction (its items' locks held): the refusal when an item is in a conflicting one."""
        writes = operation == "TransactWriteItems"
        with self._guard:
            conflicting = [i for i, item in enumerate(items) if self._written(item)]
            if conflicting:
                self.refused[operation] += 1
                return transaction_cancelled(len(items), conflicting)
            transaction = Transaction(writes, items)
            for item in items:
                if writes:
                    self._spoil(item)
                self._open[item].append(transaction)
            return transaction

    def end(self, operation: str, transaction: Transaction) -> Exception | None:
        """The transaction commits (its items' locks held) and leaves: the refusal of a read a write spoiled."""
        with self._guard:
            for item in transaction.items:
                still = [other for other in self._open.get(item, ()) if other is not transaction]
                if still:
                    self._open[item] = still
                else:
                    self._open.pop(item, None)
            if transaction.spoiled:
                self.refused[operation] += 1
                return transaction_cancelled(len(transaction.items), sorted(transaction.spoiled))
            return None

    def write(self, operation: str, item: ItemKey) -> Exception | None:
        """A single-item write (its item's lock held): refused while a transaction writes the item; it spoils the
        transactional reads of it in progress."""
        with self._guard:
            if self._written(item):
                self.refused[operation] += 1
                return transaction_conflict()
            self._spoil(item)
            return None

    def in_progress(self) -> int:
        """How many transactions are prepared and not yet ended (what a racing request would meet now)."""
        with self._guard:
            return len({id(transaction) for open_ in self._open.values() for transaction in open_})

    def _written(self, item: ItemKey) -> bool:
        return any(other.writes for other in self._open.get(item, ()))

    def _spoil(self, item: ItemKey) -> None:
        for other in self._open.get(item, ()):
            if not other.writes:
                other.spoiled.add(other.items.index(item))
