"""DynamoDB's item size, measured before a write whose size a user decides (a variable, a connection).

DynamoDB refuses an item over 400 KB with a ``ValidationException`` that says nothing of which value was too
large; an aggregate holding values of any size a client sends measures its item first and raises
:class:`~updraft.store.errors.ValueTooLarge` naming it and its size, which the API answers as a 4xx. Sizes follow
DynamoDB's rules: attribute names and values in UTF-8 bytes, binary as its bytes, a number by its digits, a list
or map 3 bytes plus 1 per element plus its elements.
"""

from __future__ import annotations

from typing import Any

from updraft.store.errors import ValueTooLarge
from updraft.store.models import Item

MAX_ITEM_BYTES = 400 * 1024  # DynamoDB's limit on one item, names and values included


def _value_bytes(typed: dict[str, Any]) -> int:
    (kind, value), = typed.items()
    if kind == "S":
        return len(value.encode("utf-8", errors="surrogatepass"))
    if kind == "B":
        return len(value)
    if kind == "N":
        return len(str(value)) // 2 + 2
    if kind in ("SS", "NS", "BS"):
        return sum(_value_bytes({kind[0]: member}) for member in value)
    if kind == "L":
        return 3 + sum(1 + _value_bytes(member) for member in value)
    if kind == "M":
        return 3 + sum(1 + len(name.encode("utf-8")) + _value_bytes(member) for name, member in value.items())
    return 1  # BOOL, NULL


def item_bytes(row: Item) -> int:
    """The size DynamoDB counts for ``row`` as it would be written."""
    return sum(len(name.encode("utf-8")) + _value_bytes(typed) for name, typed in row.serialize().items())


def check_item_size(row: Item, what: str) -> None:
    """:class:`ValueTooLarge` when ``row`` is over DynamoDB's item limit; ``what`` names it for the message
    (``variable 'big'``)."""
    size = item_bytes(row)
    if size > MAX_ITEM_BYTES:
        raise ValueTooLarge(f"value too large: {what} takes {size / 1024:,.0f} KB stored, over the "
                            f"{MAX_ITEM_BYTES // 1024} KB DynamoDB holds in one item")
