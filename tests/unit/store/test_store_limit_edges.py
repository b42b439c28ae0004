"""The sharded limits' edges: a process that never read a limit, a holder taken twice by racing claims, and a
rebalance stalled past its lease."""

from __future__ import annotations

import pendulum

from updraft.model.limits import pool_limit
from updraft.store import keys, limit_rebalance, limit_shards
from updraft.store.dynamo import DynamoStore
from updraft.store.limit_api import Taken
from updraft.store.limit_rebalance import REBALANCE_LEASE

NOW = pendulum.datetime(2024, 1, 1, tz="UTC")


def _sharded_pool(store, name: str, size: int) -> str:
    """A pool of ``size`` slots spread over its shards (the fifth take finds the root full and spreads it)."""
    limit_id = pool_limit(name)
    store.set_pool(name, size)
    for n in range(5):
        assert store.take_slots(limit_id, f"first-{n}", 1, limit=size, now=NOW)
    assert len(store._read(limit_id)) > 1
    return limit_id


def _away_from_root(limit_id: str, store) -> str:
    active = store._shape(limit_id).active
    return next(h for h in (f"holder-{n}" for n in range(100)) if keys.holder_shard(h, active) != 0)


def test_a_process_that_never_read_a_sharded_limit_does_not_count_a_holder_twice(store, config, s3):
    limit_id = _sharded_pool(store, "wide", 40)
    assert store.release_slots(limit_id, "first-0")  # the root has room again
    holder = _away_from_root(limit_id, store)
    assert store.take_slots(limit_id, holder, 1, limit=40, now=NOW)
    fresh = DynamoStore(config, s3_client=s3)  # another invocation: it knows nothing of this limit's shards
    assert fresh.take_slots(limit_id, holder, 1, limit=40, now=NOW) is Taken.HELD
    assert store.get_limit(limit_id).holders[holder] == 1


def test_a_release_gives_back_one_take_of_a_holder_taken_twice(store):
    """Two takes of one holder (two schedulers claiming the same try) are two releases: the loser's release
    never frees the winner's slots too."""
    limit_id = _sharded_pool(store, "twice", 40)
    holder = _away_from_root(limit_id, store)
    assert store.take_slots(limit_id, holder, 1, limit=40, now=NOW)
    home = keys.holder_shard(holder, store._shape(limit_id).active)
    elsewhere = (home + 1) % store._shape(limit_id).active
    value = limit_shards.entry_value(1, NOW, "other-claim", holder)
    assert store._take_at(limit_id, elsewhere, keys.holder_key(holder), value)[0]  # the racing claim's own take
    before = store.get_limit(limit_id).available
    assert store._release_one_take(limit_id, keys.holder_key(holder))
    state = store.get_limit(limit_id)
    assert (state.holders[holder], state.available) == (1, before + 1)


def test_a_rebalance_stalled_past_its_lease_writes_nothing_of_its_plan(store, monkeypatch):
    """A resize to 16 leases the root and reads the limit (10 slots: caps 4, 4, 2), then stalls; its lease runs
    out and another rebalance at 10 goes through, leaving the caps as they were. The stalled one then writes
    nothing: raising the third shard to 4 as its plan says would make the limit admit 12."""
    limit_id = "stalled"
    store.resize_limit(limit_id, 10)  # the root alone
    assert store._rebalance(limit_id)  # spread over its shards: caps 4, 4, 2
    fence = store._lease(limit_id)
    stale = store._read(limit_id)
    assert [int(shard.cap) for shard in stale] == [4, 4, 2]
    later = limit_rebalance._now_ms() + int(REBALANCE_LEASE.total_seconds() * 1000) + 1000
    monkeypatch.setattr(limit_rebalance, "_now_ms", lambda: later)
    assert store._rebalance(limit_id)  # the next one, at the same size
    assert not store._apply_plan(limit_id, stale, fence, 16)  # the stalled one wakes up
    assert sum(store.take_slots(limit_id, f"h{n}", 1, limit=10, now=NOW) for n in range(12)) == 10
    assert store.get_limit(limit_id).limit == 10
