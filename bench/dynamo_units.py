"""DynamoDB's published sizing rules as pure functions: item sizes, read/write units, index propagation, prices.

The capacity model (``bench/capacity_bench.py``) charges every request it records with these rules, so they are
written once here and unit-tested against the documented examples (``tests/unit/bench/test_dynamo_units.py``).
Sources, as published by AWS (Developer Guide): "DynamoDB item sizes and formats" (CapacityUnitCalculations),
"DynamoDB read and write operations" (read-write-operations), "Provisioned throughput considerations for global
secondary indexes" (GSI.ThroughputConsiderations), "Throughput considerations for local secondary indexes"
(LSI.ThroughputConsiderations), "Service, account, and table quotas" (per-partition throughput), and the
on-demand and Lambda price pages for us-east-1.

Items are in DynamoDB's wire format (``{"S": "x"}``, ``{"N": "12"}``, ``{"M": {...}}``), as moto holds them.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

READ_UNIT_BYTES = 4096  # a strongly consistent read of up to 4 KB is one read unit; eventually consistent, half
WRITE_UNIT_BYTES = 1024  # a write of up to 1 KB is one write unit
MAX_ITEM_BYTES = 400 * 1024  # an item (names + values) may not exceed 400 KB
PARTITION_WCU_PER_S = 1000  # one partition serves at most 1,000 write units per second...
PARTITION_RCU_PER_S = 3000  # ...and 3,000 read units per second; one item always lives on one partition

# On-demand prices, us-east-1 (since the 1 November 2024 reduction), and Lambda's x86 prices.
USD_PER_MILLION_WRITE_UNITS = 0.625
USD_PER_MILLION_READ_UNITS = 0.125
USD_PER_LAMBDA_GB_SECOND = 0.0000166667
USD_PER_MILLION_LAMBDA_REQUESTS = 0.20

Item = Mapping[str, Mapping[str, Any]]


def _utf8(text: str) -> int:
    return len(text.encode("utf-8"))


def _raw_bytes(value: bytes | bytearray | str) -> int:
    """A binary's raw length: the wire carries it base64-encoded, DynamoDB sizes the decoded bytes."""
    return len(value) if isinstance(value, bytes | bytearray) else len(base64.b64decode(value))


def number_size(text: str) -> int:
    """1 byte per two significant digits, plus 1 byte (leading and trailing zeroes trimmed)."""
    mantissa = text.strip().lstrip("+-").lower().split("e")[0]
    digits = mantissa.replace(".", "").strip("0")  # DynamoDB keeps a mantissa and an exponent
    return math.ceil(max(len(digits), 1) / 2) + 1


def value_size(value: Mapping[str, Any]) -> int:
    """The size of one attribute value (without its name)."""
    ((kind, body),) = value.items()
    if kind == "S":
        return _utf8(body)
    if kind == "N":
        return number_size(body)
    if kind == "B":
        return _raw_bytes(body)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "SS":
        return sum(_utf8(s) for s in body)
    if kind == "NS":
        return sum(number_size(n) for n in body)
    if kind == "BS":
        return sum(_raw_bytes(b) for b in body)
    if kind == "L":  # 3 bytes for the list, 1 per element
        return 3 + sum(value_size(element) + 1 for element in body)
    if kind == "M":  # 3 bytes for the map, 1 per entry; entries are named
        return 3 + sum(_utf8(name) + value_size(element) + 1 for name, element in body.items())
    raise ValueError(f"not a DynamoDB attribute value: {kind!r}")


def item_size(item: Item | None) -> int:
    """The sum of the item's attribute names and values; an absent item is 0 bytes."""
    return sum(_utf8(name) + value_size(value) for name, value in (item or {}).items())


def read_units(size: int, *, consistent: bool) -> float:
    """GetItem (or a Query's total): the size rounded up to 4 KB, at least one unit even when nothing is found;
    an eventually consistent read costs half."""
    units = max(1, math.ceil(size / READ_UNIT_BYTES))
    return float(units) if consistent else units / 2


def write_units(before: int, after: int) -> int:
    """PutItem, UpdateItem, DeleteItem: the larger of the item before and after, rounded up to 1 KB, at least 1.
    A conditional write whose condition fails is charged the same (the size of the existing item, at least 1)."""
    return max(1, math.ceil(max(before, after) / WRITE_UNIT_BYTES))


@dataclass(frozen=True)
class Index:
    """A secondary index as the model needs it: its key attributes and what it projects."""

    name: str
    partition_key: str
    sort_key: str
    projection: str  # "ALL" | "KEYS_ONLY"
    local: bool = False


def index_entry(item: Item | None, index: Index, table_keys: Iterable[str]) -> dict[str, Mapping[str, Any]] | None:
    """The item as the index holds it, or None when the item is not in the (sparse) index."""
    if not item or index.partition_key not in item or index.sort_key not in item:
        return None
    if index.projection == "ALL":
        return dict(item)
    names = {*table_keys, index.partition_key, index.sort_key}
    return {name: value for name, value in item.items() if name in names}


@dataclass(frozen=True)
class IndexWrite:
    """Write units one table write costs one index, and the index partition key they land on."""

    index: str
    partition: str
    units: int


def index_writes(before: Item | None, after: Item | None, index: Index, table_keys: Iterable[str]) -> list[IndexWrite]:
    """What a table write propagates to one index: an entry that appears is a put, one that disappears a delete,
    a changed index key a delete plus a put, a changed projected attribute one write of the larger entry."""
    keys = tuple(table_keys)
    old, new = index_entry(before, index, keys), index_entry(after, index, keys)

    def write(entry: Item) -> IndexWrite:
        return IndexWrite(index.name, str(next(iter(entry[index.partition_key].values()))),
                          write_units(item_size(entry), 0))

    if old is None and new is None:
        return []
    if old is None:
        return [write(new)]  # type: ignore[arg-type]
    if new is None:
        return [write(old)]
    if (old[index.partition_key], old[index.sort_key]) != (new[index.partition_key], new[index.sort_key]):
        return [write(old), write(new)]
    if old == new:
        return []
    larger = old if item_size(old) >= item_size(new) else new
    return [write(larger)]


def dynamodb_cost_usd(write_units_total: float, read_units_total: float) -> float:
    """On-demand: write and read request units at their published prices."""
    return (write_units_total * USD_PER_MILLION_WRITE_UNITS + read_units_total * USD_PER_MILLION_READ_UNITS) / 1e6


def lambda_cost_usd(invocations: float, gb_seconds: float) -> float:
    """Lambda: requests plus GB-seconds of duration (x86)."""
    return invocations * USD_PER_MILLION_LAMBDA_REQUESTS / 1e6 + gb_seconds * USD_PER_LAMBDA_GB_SECOND
