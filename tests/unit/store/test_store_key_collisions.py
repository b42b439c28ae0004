"""Names that a plain join of key parts turned into another item (issue 34), against the store: each is its own item
whatever separators it holds (``keys`` and ``model.key_parts``; the builders' property tests are in
``test_store_keys.py``)."""

from __future__ import annotations

import datetime as dt

import pendulum

from updraft.model.limits import pool_limit
from updraft.model.records import TIKey
from updraft.store.dynamo import DynamoStore

NOW = pendulum.datetime(2024, 1, 1, tz="UTC")


def _holders(store: DynamoStore, pool: str) -> list[dict]:
    return [shard.holders.as_dict() if shard.holders else {} for shard in store._read(pool_limit(pool))]


def test_a_pool_named_after_another_pools_shard_is_a_pool_of_its_own(store: DynamoStore) -> None:
    """Pool ``victim#<i>`` was pool ``victim``'s shard ``i``: it showed slots 0 and victim's holders as its
    occupancy, and deleting it erased them (victim's tries' slots)."""
    store.set_pool("victim", 20)
    for n in range(8):  # more holders than a root takes: victim spreads over shards
        assert store.take_slots(pool_limit("victim"), f"h{n}", 1, limit=20, now=NOW)
    before = _holders(store, "victim")
    held = [i for i, holders in enumerate(before) if i > 0 and holders]
    assert held, "victim should hold in a shard beyond its root"

    for i in held:
        assert store.get_pool(f"victim#{i}") is None
        attacker = store.set_pool(f"victim#{i}", 0)
        assert (attacker.slots, attacker.occupied) == (0, 0)
    shown = {p.name: (p.slots, p.occupied) for p in store.list_pools()}
    assert shown["victim"] == (20, 8)
    assert all(shown[f"victim#{i}"] == (0, 0) for i in held)

    for i in held:
        assert store.delete_pool(f"victim#{i}")
    assert _holders(store, "victim") == before
    victim = store.get_pool("victim")
    assert victim is not None and (victim.slots, victim.occupied) == (20, 8)


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
