"""Names that a plain join of key parts turned into another item (issue 34), against the store: each is its own item
whatever separators it holds (``keys`` and ``model.key_parts``; the builders' property tests are in
``test_store_keys.py``)."""

from __future__ import annotations

import datetime as dt

import pendulum

from updraft.limits import Table, ensure
from updraft.limits.counters import read
from updraft.model.limits import pool_limit
from updraft.model.records import TIKey
from updraft.store.dynamo import DynamoStore

NOW = pendulum.datetime(2024, 1, 1, tz="UTC")


def test_a_pool_named_after_another_pools_shard_is_a_pool_of_its_own(store: DynamoStore) -> None:
    """Pool ``victim#<i>`` would share its partition with pool ``victim``'s counter shard ``i`` if the name were
    joined plainly: setting and deleting it must leave victim's counters (its holders' slots) as they were."""
    table = Table(*store.transaction_target())
    store.set_pool("victim", 200)
    assert ensure(table, pool_limit("victim"), 200)
    before = read(table, pool_limit("victim"))
    assert before is not None and len(before.shares) > 1, "victim should have shards beyond its root"

    for i in range(1, len(before.shares)):
        assert store.get_pool(f"victim#{i}") is None
        assert store.set_pool(f"victim#{i}", 0).slots == 0
    shown = {p.name: p.slots for p in store.list_pools()}
    assert shown["victim"] == 200
    assert all(shown[f"victim#{i}"] == 0 for i in range(1, len(before.shares)))

    for i in range(1, len(before.shares)):
        assert store.delete_pool(f"victim#{i}")
    assert read(table, pool_limit("victim")) == before
    assert store.pool_slots("victim") == 200


def test_an_xcom_key_never_reaches_another_xcoms_value_in_s3(store: DynamoStore, config, s3) -> None:
    """An XCom's value and its shown (masked) value kept in S3 were ``<key>.json.gz`` and ``<key>.shown.json.gz``:
    the value of XCom ``x.shown`` overwrote the shown value of XCom ``x``."""
    small = DynamoStore(config.__class__(**{**config.__dict__, "large_item_bytes": 10}), s3_client=s3)
    ti = TIKey("etl", "manual__1", "load")
    big = "v" * 200
    small.put_xcom(ti, "x", {"password": "hunter2", "pad": big}, shown={"password": "***", "pad": big},
                   now=dt.datetime(2024, 1, 1, tzinfo=dt.UTC))
    small.put_xcom(ti, "x.shown", {"other": big}, now=dt.datetime(2024, 1, 1, tzinfo=dt.UTC))

    assert small.shown_xcoms("etl", "manual__1", "load") == {
        (-1, "x"): {"password": "***", "pad": big}, (-1, "x.shown"): {"other": big}}
    assert small.list_xcoms("etl", "manual__1", "load") == {
        (-1, "x"): {"password": "hunter2", "pad": big}, (-1, "x.shown"): {"other": big}}


def test_names_holding_separators_are_items_of_their_own(store: DynamoStore) -> None:
    """Variables, connections and task state whose names hold ``#`` and ``%`` are read back by their own name."""
    names = ["a", "a#b", "a%23b", "a#", "a%", "%", "#"]
    for name in names:
        store.set_variable(name, f"value of {name}")
    assert {name: store.get_variable(name).value for name in names} == {name: f"value of {name}" for name in names}
    ti = TIKey("etl", "manual__1", "load")
    for name in names:
        store.set_task_state(ti, name, name, expires_at=None, now=NOW)
    assert sorted(entry.key for entry in store.list_task_state(ti, now=NOW)) == sorted(names)
