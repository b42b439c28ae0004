"""The capacity model's sizing rules against DynamoDB's documented examples (bench/dynamo_units.py)."""

from __future__ import annotations

import base64

import pytest

from bench.dynamo_units import (
    Index,
    dynamodb_cost_usd,
    index_writes,
    item_size,
    lambda_cost_usd,
    number_size,
    read_units,
    value_size,
    write_units,
)

KEYS = ("pk", "sk")
ALL = Index("by_state", "gpk", "gsk", "ALL")
KEYS_ONLY = Index("listing", "gpk", "gsk", "KEYS_ONLY")


def test_the_documented_item_of_two_string_attributes_is_23_bytes():
    # "shirt-color" = "R" and "shirt-size" = "M": 11 + 1 + 10 + 1.
    assert item_size({"shirt-color": {"S": "R"}, "shirt-size": {"S": "M"}}) == 23


def test_strings_and_names_are_counted_in_utf8_bytes():
    assert item_size({"é": {"S": "日本"}}) == 2 + 6


@pytest.mark.parametrize(("number", "size"), [
    ("1", 2), ("12", 2), ("123", 3), ("-123", 3), ("1200", 2), ("0.0012", 2), ("12.5", 3), ("0", 2),
    ("1E+5", 2), ("12345678901234567890123456789012345678", 20),
])
def test_numbers_cost_one_byte_per_two_significant_digits_plus_one(number, size):
    assert number_size(number) == size


def test_binaries_are_sized_by_their_raw_bytes_not_their_base64():
    raw = b"\x00\x01\x02\x03\x04"
    assert value_size({"B": base64.b64encode(raw).decode()}) == 5
    assert value_size({"B": raw}) == 5


def test_null_and_boolean_are_one_byte():
    assert item_size({"a": {"NULL": True}, "b": {"BOOL": False}}) == 1 + 1 + 1 + 1


def test_lists_and_maps_cost_3_bytes_and_1_per_element():
    assert value_size({"L": []}) == 3
    assert value_size({"M": {}}) == 3
    assert value_size({"L": [{"S": "ab"}, {"N": "1"}]}) == 3 + (2 + 1) + (2 + 1)
    # A map's entries are named: "at" (2) + "x" (1) + 1 byte of overhead.
    assert value_size({"M": {"at": {"S": "x"}}}) == 3 + 2 + 1 + 1


def test_a_limit_holder_entry_shows_why_a_full_limit_item_grows_by_each_holder():
    holder = {"M": {"slots": {"N": "1"}, "at": {"S": "2024-01-31T00:00:00.000000+00:00"}}}
    holders = {f"dag|run_{i:03d}|task|-1|1": holder for i in range(128)}
    one = value_size({"M": dict(list(holders.items())[:1])})
    assert value_size({"M": holders}) == 3 + 128 * (one - 3)


def test_reads_round_up_to_4_kb_and_an_eventually_consistent_read_costs_half():
    assert read_units(3500, consistent=True) == 1  # "an item that is 3.5 KB ... rounds up to 4 KB"
    assert read_units(8 * 1024, consistent=True) == 2  # "if your item size is 8 KB, you require 2 read units"
    assert read_units(8 * 1024, consistent=False) == 1
    assert read_units(0, consistent=True) == 1  # reading an item that does not exist still costs
    assert read_units(0, consistent=False) == 0.5


def test_writes_round_up_to_1_kb_and_take_the_larger_of_before_and_after():
    assert write_units(0, 500) == 1
    assert write_units(0, 2 * 1024) == 2  # "if your item size is 2 KB, you require 2 write request units"
    assert write_units(15 * 1024 + 1, 100) == 16  # an update that shrinks an item pays for the item it found
    assert write_units(0, 0) == 1  # a delete of nothing, a failed condition on nothing


def test_an_index_is_written_only_for_items_it_holds():
    plain = {"pk": {"S": "a"}, "sk": {"S": "b"}, "x": {"S": "1"}}
    assert index_writes(plain, {**plain, "x": {"S": "2"}}, ALL, KEYS) == []


def test_an_entry_appearing_or_disappearing_is_one_write_on_the_index_partition():
    before = {"pk": {"S": "a"}, "sk": {"S": "b"}}
    after = {**before, "gpk": {"S": "SHARD#3"}, "gsk": {"S": "t"}}
    (put,) = index_writes(before, after, ALL, KEYS)
    assert (put.index, put.partition, put.units) == ("by_state", "SHARD#3", 1)
    (delete,) = index_writes(after, before, ALL, KEYS)
    assert delete.partition == "SHARD#3"


def test_a_changed_index_key_is_a_delete_and_a_put():
    before = {"pk": {"S": "a"}, "sk": {"S": "b"}, "gpk": {"S": "S1"}, "gsk": {"S": "t1"}}
    after = {**before, "gpk": {"S": "S2"}}
    assert [w.partition for w in index_writes(before, after, ALL, KEYS)] == ["S1", "S2"]


def test_a_keys_only_index_ignores_other_attributes_and_sizes_the_entry_by_its_keys():
    before = {"pk": {"S": "a"}, "sk": {"S": "b"}, "gpk": {"S": "S1"}, "gsk": {"S": "t1"}, "big": {"S": "x" * 5000}}
    assert index_writes(before, {**before, "big": {"S": "y" * 5000}}, KEYS_ONLY, KEYS) == []
    assert index_writes(before, {**before, "big": {"S": "y" * 5000}}, ALL, KEYS)[0].units == 5
    (put,) = index_writes(None, before, KEYS_ONLY, KEYS)
    assert put.units == 1


def test_prices():
    assert dynamodb_cost_usd(1_000_000, 1_000_000) == pytest.approx(0.625 + 0.125)
    assert lambda_cost_usd(1_000_000, 1) == pytest.approx(0.20 + 0.0000166667)
