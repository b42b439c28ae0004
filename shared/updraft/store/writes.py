"""The one way the store writes conditionally, shared by every aggregate module.

A failed condition is an expected outcome (someone else got there first) and comes back as ``False``, never as
pynamodb's ``PutError``/``UpdateError``/``DeleteError``; only real failures (throttling past the retries, a
missing table) still raise.

A single write on an item a transaction holds at that moment (a claim's or a release's, ``updraft.limits``) is
rejected by DynamoDB with ``TransactionConflictException``, which botocore does not retry. The rejected write
changed nothing, so it is sent again after a short jittered pause (``CONFLICT_RETRIES`` times at most): to its
caller it is the write it would have been a moment later.
"""

from __future__ import annotations

import functools
import random
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from botocore.exceptions import ClientError
from pynamodb.constants import ALL_NEW, ALL_OLD, ITEM, NONE, PUT_ITEM, UPDATE_ITEM
from pynamodb.exceptions import DeleteError, PutError, UpdateError
from pynamodb.expressions.condition import And, Condition, Or
from pynamodb.expressions.update import Action

from updraft.store.models import Item

_T = TypeVar("_T")

_CONDITION_FAILED = "ConditionalCheckFailedException"
_TRANSACTION_CONFLICT = "TransactionConflictException"
CONFLICT_RETRIES = 8  # a transaction holds its items for milliseconds: eight pauses of up to 5-20 ms outlast one
# Optimistic loops re-read and retry when a concurrent writer changed the item; a handful is plenty because
# each retry means someone else made progress.
RETRIES = 8


def condition_failed(exc: Exception) -> bool:
    return getattr(exc, "cause_response_code", None) == _CONDITION_FAILED


def _conflicted(exc: Exception) -> bool:
    """A write rejected because a transaction held its item (nothing written)."""
    if isinstance(exc, ClientError):
        return exc.response.get("Error", {}).get("Code") == _TRANSACTION_CONFLICT
    return getattr(exc, "cause_response_code", None) == _TRANSACTION_CONFLICT


def past_conflicts(write: Callable[[], _T]) -> _T:
    """``write()``, sent again while a transaction holding its item rejects it (``TransactionConflictException``),
    after a jittered pause that doubles from 5 ms up to 20 ms; the last rejection is raised."""
    for attempt in range(CONFLICT_RETRIES):
        try:
            return write()
        except (PutError, UpdateError, DeleteError, ClientError) as exc:
            if not _conflicted(exc):
                raise
            time.sleep(random.random() * min(0.02, 0.005 * 2**attempt))
    return write()


def conditional(write: Callable[[], object]) -> bool:
    """Run one conditional write; a failed condition is a lost race, reported as False."""
    try:
        past_conflicts(write)
    except (PutError, UpdateError, DeleteError) as exc:
        if condition_failed(exc):
            return False
        raise
    return True


def write_token() -> str:
    """A fresh id for one logical write, stored on the item it writes.

    Lambda's SDK resends a request whose response was lost (a timeout, a reset connection): the write may have
    landed, and the resent copy then fails its condition against our own effect. The item carrying this write's
    token tells that case (a lost acknowledgement) apart from a lost race, so it counts as success.
    """
    return uuid.uuid4().hex


def resent(exc: Exception) -> bool:
    """The SDK sent this request more than once (botocore's ``RetryAttempts``, on the ClientError pynamodb wraps):
    only then can its failed condition have met our own landed write."""
    cause = getattr(exc, "cause", None)
    original = getattr(cause, "__cause__", None) or cause
    response = getattr(original, "response", None) or {}
    return int(response.get("ResponseMetadata", {}).get("RetryAttempts", 0)) > 0


def acknowledged(write: Callable[[], object], landed: Callable[[], bool]) -> bool:
    """``conditional``, except that a failed condition of a resent request asks ``landed`` (a strong read of the
    write's token) whether the write was ours all along. A request sent once costs what it did: a lost race is
    told apart without a read."""
    try:
        past_conflicts(write)
    except (PutError, UpdateError, DeleteError) as exc:
        if not condition_failed(exc):
            raise
        return resent(exc) and landed()
    return True


def update_quietly(row: Item, actions: Sequence[Action], condition: Condition | None) -> None:
    """A conditional update that returns nothing.

    ``Model.update`` asks for ALL_NEW so it can refresh the object; on a limit item that returns the whole holders
    map with every claim (quadratic bytes as a pool fills) and on every write it is traffic we never read.
    """
    hash_key, range_key = row._get_hash_range_key_serialized_values()
    row._get_connection().update_item(hash_key, range_key=range_key, actions=list(actions), condition=condition,
                                      return_values=NONE)


@dataclass(frozen=True)
class Written:
    """What a conditional write that reports its item did: ``landed``, and the item as the write left it (landed)
    or found it (refused; None when there is no such item), raw as DynamoDB returns it. ``resent``: the SDK sent
    the request more than once, so a refusal may have met our own landed write (``acknowledged``)."""

    landed: bool
    item: dict[str, Any] | None
    resent: bool = False


def write_reporting(row: Item, *, actions: Sequence[Action] | None = None, condition: Condition | None) -> Written:
    """One conditional UpdateItem (``actions``) or PutItem (``row`` as it is) that returns the item both ways: as
    written when it lands, as found when its condition fails (``ReturnValuesOnConditionCheckFailure``). Neither
    costs read units, so a refused take says why (full, held, or a limit that grew) without a read."""
    table = row._get_connection()
    connection = table.connection
    hash_key, range_key = row._get_hash_range_key_serialized_values()
    if actions is None:
        _, save = row._get_save_args(condition)
        kwargs = connection.get_operation_kwargs(
            table.table_name, hash_key, range_key=range_key, key=ITEM, attributes=save["attributes"],
            condition=condition, return_values=NONE, return_values_on_condition_failure=ALL_OLD)
        operation = PUT_ITEM
    else:
        kwargs = connection.get_operation_kwargs(
            table.table_name, hash_key, range_key=range_key, actions=list(actions), condition=condition,
            return_values=ALL_NEW, return_values_on_condition_failure=ALL_OLD)
        operation = UPDATE_ITEM
    try:
        data = past_conflicts(lambda: connection.dispatch(operation, kwargs))
    except ClientError as exc:
        original = exc.__cause__ if isinstance(exc.__cause__, ClientError) else exc
        response = original.response
        if response.get("Error", {}).get("Code") != _CONDITION_FAILED:
            raise (PutError if operation == PUT_ITEM else UpdateError)(f"Failed to write item: {exc}", exc) from exc
        retries = int(response.get("ResponseMetadata", {}).get("RetryAttempts", 0))
        return Written(False, cast(dict[str, Any] | None, response.get("Item")), resent=retries > 0)
    attributes: dict[str, Any] | None = (data or {}).get("Attributes") if actions is not None else None
    return Written(True, attributes)


@dataclass(frozen=True)
class TransactWrite:
    """One conditional write as an element of a ``TransactWriteItems`` (``{"Update": {...}}``, low-level
    attribute values), built but not sent, and ``landed``: a strong read of whether this very write landed (its
    write token on the item), asked only when a resent transaction was cancelled by its condition, which may have
    met the write's own landed effect (``acknowledged``)."""

    item: dict[str, Any]
    landed: Callable[[], bool]


def set_actions(model: type[Item], values: Mapping[str, Any]) -> list[Action]:
    """SET each attribute, REMOVE it for None (absent, so sparse indexes drop the item): pynamodb's ``set(None)``
    writes a NULL, which a ``does_not_exist`` condition then never matches (a removed DAG's file could then never
    be stored again)."""
    return [getattr(model, name).remove() if value is None else getattr(model, name).set(value)
            for name, value in values.items()]


# ----------------------------------------------------------------------------------------- named conditions
# pynamodb's ``&`` and ``|`` on conditions are unannotated (Any to mypy); these build the same And/Or, typed.
def all_of(first: Condition, *rest: Condition) -> Condition:
    return functools.reduce(And, rest, first)


def any_of(first: Condition, *rest: Condition) -> Condition:
    return functools.reduce(Or, rest, first)


def item_absent(model: type[Item]) -> Condition:
    """The item does not exist yet: the write creates it, and a second creator loses."""
    return model.pk.does_not_exist()


def item_present(model: type[Item]) -> Condition:
    return model.pk.exists()
