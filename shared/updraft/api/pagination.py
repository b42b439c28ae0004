"""Airflow's offset pagination: ``limit`` (default 50, clamped to 100), ``offset``, repeatable ``order_by``.

Lists are small enough to be assembled in the Lambda (the store lists DAGs, pools and import errors whole, and
one DAG's runs from an index), so filtering, ordering and slicing happen here, after the store read. ``order_by``
takes the names Airflow accepts for the resource, ``-`` for descending; an unknown name is Airflow's 400. Nulls
sort last ascending and first descending, as PostgreSQL orders them behind Airflow.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from updraft.api.errors import BadRequest
from updraft.api.request import Query

FALLBACK_PAGE_LIMIT = 50  # Airflow's [api] fallback_page_limit
MAXIMUM_PAGE_LIMIT = 100  # Airflow's [api] maximum_page_limit

T = TypeVar("T")


@dataclass(frozen=True)
class Page:
    limit: int
    offset: int
    order_by: tuple[str, ...]


def page_of(query: Query, default_order: Sequence[str]) -> Page:
    limit = query.integer("limit", FALLBACK_PAGE_LIMIT, ge=0)
    offset = query.integer("offset", 0, ge=0)
    order_by = tuple(o for o in query.strings("order_by", list(default_order)) if o) or tuple(default_order)
    return Page(limit=min(limit, MAXIMUM_PAGE_LIMIT), offset=offset, order_by=order_by)


class _Reversed:
    """Inverts the order of one sort key, so mixed ascending/descending keys sort in one pass."""

    __slots__ = ("key",)
    __hash__ = None  # type: ignore[assignment]  # compared only, inside sort keys

    def __init__(self, key: Any) -> None:
        self.key = key

    def __lt__(self, other: _Reversed) -> bool:
        return other.key < self.key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Reversed) and other.key == self.key


def _null_last(value: Any) -> tuple[bool, Any]:
    return (value is None, "" if value is None else value)


def order(items: list[T], order_by: Sequence[str], keys: Mapping[str, Callable[[T], Any]]) -> list[T]:
    """Sort by the ``order_by`` names (``-name`` descending); a name not in ``keys`` is a 400."""
    chosen: list[tuple[Callable[[T], Any], bool]] = []
    for name in order_by:
        descending = name.startswith("-")
        field = name.removeprefix("-")
        if field not in keys:
            raise BadRequest(f"Ordering with '{field}' is disallowed or the attribute does not exist on the model")
        chosen.append((keys[field], descending))

    def sort_key(item: T) -> tuple[Any, ...]:
        out = []
        for key, descending in chosen:
            value = _null_last(key(item))
            out.append(_Reversed(value) if descending else value)
        return tuple(out)

    return sorted(items, key=sort_key)


def paginate(items: list[T], page: Page, keys: Mapping[str, Callable[[T], Any]]) -> tuple[list[T], int]:
    """(this page of the ordered items, how many there are in all)."""
    ordered = order(items, page.order_by, keys)
    return ordered[page.offset:page.offset + page.limit], len(ordered)
