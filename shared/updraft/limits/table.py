"""Where the counters live: a DynamoDB client and a table name, and the one way this package writes, a
``TransactWriteItems`` whose cancellation is read item by item.

The client is injected (a boto3 client, or the one the store's pynamodb connection holds), never created here.
A transaction DynamoDB cancels says why per item (``CancellationReasons``, in the items' order): ``None`` for an
item that was fine, ``ConditionalCheckFailed`` (with the item as it was, when the write asked for it) for a
failed condition, ``TransactionConflict`` when another transaction held the item, ``ThrottlingError`` when its
partition was busy. Conflicts and throttling are retried here with jittered exponential backoff (a cancelled
transaction changed nothing, so retrying it is safe); a failed condition is the caller's to read, and any other
reason (a validation error) is raised.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from botocore.exceptions import ClientError

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_dynamodb.type_defs import TransactWriteItemTypeDef

CONDITION_FAILED = "ConditionalCheckFailed"
# Reasons a transaction is cancelled for that pass: another transaction held an item, or an item's partition was
# over its throughput (a hot shard). Retried here like a conflict.
_RETRIED = frozenset({"TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded"})
_CANCELLED = "TransactionCanceledException"
MAX_ITEMS = 100  # DynamoDB's limit on one transaction's items


class Contended(RuntimeError):
    """A transaction met other transactions (or throttling) on its items on every one of its attempts (a hot
    shard): nothing was written; the caller may try again later."""


@dataclass(frozen=True)
class Backoff:
    """How conflicting transactions are retried: ``attempts`` in all, each pause drawn uniformly below
    ``base_s * 2**attempt`` (capped at ``cap_s``), so transactions that met on a hot shard do not meet again."""

    attempts: int = 8
    base_s: float = 0.005
    cap_s: float = 0.02  # measured: an uncapped doubling made 8 claimers on one counter slower than 1 (0023)
    sleep: Callable[[float], None] = time.sleep
    random: Callable[[], float] = random.random

    def pause(self, attempt: int) -> None:
        self.sleep(self.random() * min(self.cap_s, self.base_s * 2**attempt))


@dataclass(frozen=True)
class Reason:
    """Why DynamoDB cancelled one item of a transaction (``code`` "None": this item was fine), with the item as
    it was when its write asked for it (``ReturnValuesOnConditionCheckFailure``) and it existed."""

    code: str
    item: dict[str, Any] | None = None

    @property
    def failed(self) -> bool:
        return self.code == CONDITION_FAILED


@dataclass(frozen=True)
class Outcome:
    """A transaction's end: landed (``reasons`` None), or cancelled with one reason per item. ``resent``: the SDK
    sent it more than once, so a failed condition may have met the transaction's own landed writes."""

    reasons: tuple[Reason, ...] | None = None
    resent: bool = False

    @property
    def landed(self) -> bool:
        return self.reasons is None


@dataclass(frozen=True)
class Table:
    """The counters' table: ``client`` and ``name``, and how conflicts are retried."""

    client: DynamoDBClient
    name: str
    backoff: Backoff = field(default_factory=Backoff)

    def transact(self, items: Sequence[dict[str, Any]]) -> Outcome:
        """Write ``items`` all or nothing. Conflicts and throttling are retried (``Contended`` once the attempts
        are spent); a cancellation by failed conditions comes back as its reasons; anything else is raised."""
        if not 0 < len(items) <= MAX_ITEMS:
            raise ValueError(f"a transaction writes 1 to {MAX_ITEMS} items, not {len(items)}")
        for attempt in range(self.backoff.attempts):
            try:
                self.client.transact_write_items(TransactItems=cast("Sequence[TransactWriteItemTypeDef]", items))
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") != _CANCELLED:
                    raise
                found = cast("list[dict[str, Any]]", exc.response.get("CancellationReasons") or [])
                reasons = tuple(Reason(str(r.get("Code")), r.get("Item")) for r in found)
                if any(reason.code in _RETRIED for reason in reasons):
                    self.backoff.pause(attempt)
                    continue
                if len(reasons) != len(items) or any(r.code not in ("None", CONDITION_FAILED) for r in reasons):
                    raise  # not a lost race (a validation error, a size limit): nothing to read, a bug to see
                return Outcome(reasons, exc.response.get("ResponseMetadata", {}).get("RetryAttempts", 0) > 0)
            return Outcome()
        raise Contended(f"a transaction of {len(items)} items conflicted {self.backoff.attempts} times")
