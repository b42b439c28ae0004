"""Limits spread over shard items: no item can pass 1 KB whatever the ids, a big limit spreads over its shards and
never admits one more, resizes with holders in place, unlimited limits that grow shards, and leaks returned."""

from __future__ import annotations

import datetime as dt

import pendulum
import pytest

from bench.dynamo_units import WRITE_UNIT_BYTES, item_size
from tests.dynamo_requests import dynamo_requests
from updraft.model.limits import pool_limit, task_run_limit
from updraft.model.records import TIKey
from updraft.scheduling.reconcile import reconcile_limits
from updraft.store import keys
from updraft.store.limit_shards import NAME_INLINE_MAX, PIECE, SHARD_ENTRIES, SHARD_SLOTS

NOW = pendulum.datetime(2024, 1, 1, tz="UTC")
ID_MAX = 250  # Airflow's dag_id, run_id and task_id columns (and a pool's name: 256)
# The largest number each attribute can hold, in digits: slots and sizes are Airflow INTEGERs (2**31 - 1), a
# shard's available goes as low as minus its entries' slots, shard counts stay below 2**31 / 4, a rebalance
# count below 10**12, and an entry's time is epoch milliseconds (13 digits until the year 2286).
DIGITS = {"limit": 10, "cap": 10, "available": 11, "active": 9, "extent": 9, "version": 12, "lease": 13}
ENTRY_DIGITS = (10, 13)  # an entry's slots, its time


def _raw(store, pk: str, sk: str = keys.LIMIT_SK) -> dict:
    client = store.models.limit._get_connection().connection.client
    return client.get_item(TableName=store.config.table_name, Key={"pk": {"S": pk}, "sk": {"S": sk}},
                           ConsistentRead=True)["Item"]


def _worst(item: dict) -> dict:
    """``item`` with every number at its largest, every entry key a piece's (the longest), and a root leased by
    a rebalance under way."""
    worst = {name: ({"N": "-" + "9" * DIGITS[name]} if "N" in value else value) for name, value in item.items()}
    if "limit" in worst:
        worst["lease"] = {"N": "9" * DIGITS["lease"]}
    if "holders" in worst:
        entries = {}
        for key, value in worst["holders"]["M"].items():
            _slots, _at, token, name = value["L"]
            entries[key.removesuffix(PIECE) + PIECE] = {"L": [{"N": "9" * ENTRY_DIGITS[0]}, {"N": "9" * ENTRY_DIGITS[1]},
                                                              token, name]}
        worst["holders"] = {"M": entries}
    return worst


def test_no_limit_item_can_pass_one_kilobyte_whatever_the_ids(store):
    """The layout's worst case, measured by DynamoDB's size rules on items the store really wrote: the longest
    limit id kept in keys, a full shard of entries whose names are as long as an entry keeps, the longest numbers;
    a longer limit id is named by a digest, a longer holder by a name item, itself under 1 KB."""
    longest_kept_id = "x" * keys.LIMIT_KEY_MAX
    store.resize_limit(longest_kept_id, -1)  # unlimited: any slots per entry
    inline = [f"{n}" + "h" * (NAME_INLINE_MAX - 1) for n in range(SHARD_ENTRIES + 1)]
    for holder in inline:
        assert store.take_slots(longest_kept_id, holder, 2**31 - 1, limit=-1, now=NOW)
    root = _raw(store, keys.limit_pk(longest_kept_id))
    shard = _raw(store, keys.limit_shard_pk(longest_kept_id, 1))  # the fifth holder grew the limit a shard
    assert len(root["holders"]["M"]) == SHARD_ENTRIES and len(shard["holders"]["M"]) == 1
    for item in (root, shard):
        assert item_size(_worst(item)) <= WRITE_UNIT_BYTES, item_size(_worst(item))
    # The longest ids Airflow allows: a task_run limit names three of them, a holder names them all.
    dag, run, task = "d" * ID_MAX, "r" * ID_MAX, "t" * ID_MAX
    limit_id = task_run_limit(dag, run, task)
    assert len(keys.limit_pk(limit_id)) <= len(keys.limit_pk(longest_kept_id))
    holder = TIKey(dag, run, task, 2**31 - 1).holder(99999)
    assert store.take_slots(limit_id, holder, 1, limit=16, now=NOW)
    assert item_size(_worst(_raw(store, keys.limit_pk(limit_id)))) <= WRITE_UNIT_BYTES
    name_item = _raw(store, keys.holder_name_pk(limit_id, keys.holder_key(holder)), keys.HOLDER_NAME_SK)
    assert item_size(name_item) <= WRITE_UNIT_BYTES
    assert store.get_limit(limit_id).holders == {holder: 1}
    assert store.release_slots(limit_id, holder)
    assert store.get_limit(limit_id).holders == {}
    with pytest.raises(KeyError):
        _raw(store, keys.holder_name_pk(limit_id, keys.holder_key(holder)), keys.HOLDER_NAME_SK)


def _shard_of(store, limit_id: str, holder: str) -> int:
    key = keys.holder_key(holder)
    return next(i for i, shard in enumerate(store._read(limit_id)) if any(
        k.removesuffix(PIECE) == key for k in (shard.holders.as_dict() if shard.holders else {})))


N = 40  # holders of one pool of N slots (bench/limit_shards_bench.py goes to 1,000: moto is slow at this)


def test_a_full_pool_spreads_over_its_shards_and_refuses_one_more(store):
    store.set_pool("wide", N)
    holders = [TIKey("d", "r", f"t{n}", -1).holder(1) for n in range(N)]
    for holder in holders:
        assert store.take_slots(pool_limit("wide"), holder, 1, limit=N, now=NOW)
    assert not store.take_slots(pool_limit("wide"), TIKey("d", "r", "extra", -1).holder(1), 1, limit=N, now=NOW)
    shards = store._read(pool_limit("wide"))
    used = [s for s in shards if s.holders and s.holders.as_dict()]
    assert len(used) >= N // SHARD_SLOTS
    assert all(len(s.holders.as_dict()) <= SHARD_ENTRIES for s in shards)
    state = store.get_limit(pool_limit("wide"))
    assert (state.limit, state.available, len(state.holders)) == (N, 0, N)
    assert store.get_pool("wide").occupied == N
    # A release anywhere makes room for exactly one more.
    assert store.release_slots(pool_limit("wide"), holders[7])
    assert store.take_slots(pool_limit("wide"), "late", 1, limit=N, now=NOW)
    assert not store.take_slots(pool_limit("wide"), "later", 1, limit=N, now=NOW)


def test_a_take_bigger_than_a_shard_is_spread_in_pieces_and_released_whole(store):
    store.set_pool("big", 20)
    assert store.take_slots(pool_limit("big"), "small", 3, limit=20, now=NOW)
    assert store.take_slots(pool_limit("big"), "huge", 11, limit=20, now=NOW)
    assert not store.take_slots(pool_limit("big"), "huge", 1, limit=20, now=NOW)  # holds already, in pieces
    assert not store.take_slots(pool_limit("big"), "too-big", 7, limit=20, now=NOW)  # 6 left
    assert store.get_limit(pool_limit("big")).holders == {"small": 3, "huge": 11}
    assert store.release_slots(pool_limit("big"), "huge")
    assert not store.release_slots(pool_limit("big"), "huge")
    assert store.take_slots(pool_limit("big"), "too-big", 17, limit=20, now=NOW)
    assert store.get_limit(pool_limit("big")).available == 0


def test_shrink_and_grow_a_sharded_pool_while_it_is_held(store):
    limit_id = pool_limit("elastic")
    store.set_pool("elastic", 16)
    for n in range(12):
        assert store.take_slots(limit_id, f"h{n}", 1, limit=16, now=NOW)
    assert len(store._read(limit_id)) >= 3
    store.set_pool("elastic", 4)  # 12 held: nobody more until 9 go
    assert not store.take_slots(limit_id, "new-a", 1, limit=4, now=NOW)
    for n in range(8):
        assert store.release_slots(limit_id, f"h{n}")
    assert not store.take_slots(limit_id, "new-a", 1, limit=4, now=NOW)
    assert store.release_slots(limit_id, "h8")
    assert store.take_slots(limit_id, "new-a", 1, limit=4, now=NOW)
    assert not store.take_slots(limit_id, "new-b", 1, limit=4, now=NOW)
    store.set_pool("elastic", 10)
    admitted = sum(store.take_slots(limit_id, f"g{n}", 1, limit=10, now=NOW) for n in range(8))
    state = store.get_limit(limit_id)
    assert (admitted, state.limit, state.available, len(state.holders)) == (6, 10, 0, 10)


def test_an_unlimited_limit_grows_shards_of_bounded_entries(store):
    fence = "dag_callbacks:d:r"  # the callback fence: holders of no slots on an unlimited limit
    for n in range(5 * SHARD_ENTRIES):
        assert store.take_slots(fence, f"request-{n}", 0, limit=-1, now=NOW)
    assert not store.take_slots(fence, "request-3", 0, limit=-1, now=NOW)
    shards = store._read(fence)
    assert len(shards) >= 5 and all(len(s.holders.as_dict()) <= SHARD_ENTRIES for s in shards)
    assert len(store.get_limit(fence).holders) == 5 * SHARD_ENTRIES


def test_reconciliation_returns_a_leak_from_any_shard(store):
    limit_id = pool_limit("leaky")
    store.set_pool("leaky", 12)
    holders = [TIKey("gone", "r", f"t{n}", -1).holder(1) for n in range(12)]  # no task instance holds them
    for holder in holders:
        assert store.take_slots(limit_id, holder, 1, limit=12, now=NOW)
    outside_root = [h for h in holders if _shard_of(store, limit_id, h) > 0]
    assert outside_root
    assert reconcile_limits(store, [limit_id], now=NOW + dt.timedelta(minutes=5)) == 12
    assert store.get_limit(limit_id).holders == {}
    assert store.take_slots(limit_id, "fresh", 12, limit=12, now=NOW)


def test_a_growth_writes_each_new_shard_once(store):
    """A limit that outgrows its root puts each new shard with its cap (a put, then a cap raise, was two writes
    per shard: 500 writes for a pool of 1,000 instead of 250), and the shards still add up to the size."""
    limit_id = pool_limit("growing")
    store.set_pool("growing", 400)
    for n in range(SHARD_SLOTS):  # the root's own slots
        assert store.take_slots(limit_id, f"early-{n}", 1, limit=400, now=NOW)
    with dynamo_requests() as requests:
        assert store.take_slots(limit_id, "grows-it", 1, limit=400, now=NOW)  # the root full: the limit grows
    new_shards = 400 // SHARD_SLOTS - 1
    puts = [r for r in requests if r.operation == "PutItem" and r.pk.startswith("LIMIT#")]
    shard_updates = [r for r in requests
                     if r.operation == "UpdateItem" and r.pk.startswith(keys.limit_pk(limit_id) + "#")]
    assert len(puts) == new_shards
    assert len(shard_updates) <= 3, f"{len(shard_updates)} updates of new shards"  # the take's probes only
    shards = store._read(limit_id)
    assert sum(int(shard.cap) for shard in shards) == 400
    assert sum(int(shard.available) for shard in shards) == 400 - SHARD_SLOTS - 1
