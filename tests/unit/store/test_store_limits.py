"""Limits and pools: slots taken and given back by single conditional writes, never over-admitted."""

from __future__ import annotations

import collections
import threading

import pendulum
import pytest

from updraft.model.limits import DEFAULT_POOL, pool_limit
from updraft.store.errors import DefaultPoolCannotBeDeleted

NOW = pendulum.datetime(2024, 1, 1, tz="UTC")
# A holder with every character a run id may carry, plus brackets that read as list indexes in a document path.
ODD = "dag.x|scheduled__2024-01-01T00:00:00+00:00|group.task[0]|-1|1 %5B"


def test_take_creates_the_limit_on_first_use_and_never_counts_a_holder_twice(store):
    assert store.take_slots("run_tasks:d:r", "a", 2, limit=3, now=NOW)
    assert not store.take_slots("run_tasks:d:r", "a", 1, limit=3, now=NOW)  # same holder again
    assert not store.take_slots("run_tasks:d:r", "b", 2, limit=3, now=NOW)  # only 1 left
    assert store.take_slots("run_tasks:d:r", "b", 1, limit=99, now=NOW)  # the stored limit counts, not this one
    state = store.get_limit("run_tasks:d:r")
    assert (state.limit, state.available, state.holders) == (3, 0, {"a": 2, "b": 1})
    assert state.taken_at["a"] == NOW


def test_release_gives_the_holders_slots_back_once(store):
    store.take_slots("x", "a", 2, limit=2, now=NOW)
    assert store.release_slots("x", "a")
    assert not store.release_slots("x", "a")
    assert not store.release_slots("never-created", "a")
    assert store.get_limit("never-created") is None
    state = store.get_limit("x")
    assert (state.available, state.holders) == (2, {})


def test_odd_holder_names_are_one_map_key(store):
    assert store.take_slots("x", ODD, 1, limit=2, now=NOW)
    assert store.get_limit("x").holders == {ODD: 1}
    assert not store.take_slots("x", ODD, 1, limit=2, now=NOW)
    assert store.release_slots("x", ODD)
    assert store.get_limit("x").available == 2


def test_resize_keeps_holders_and_a_shrunk_limit_admits_nobody_until_released(store):
    for h in "abc":
        store.take_slots("x", h, 1, limit=4, now=NOW)
    assert store.resize_limit("x", 2)
    state = store.get_limit("x")
    assert (state.limit, state.available, set(state.holders)) == (2, -1, {"a", "b", "c"})
    assert not store.take_slots("x", "d", 1, limit=2, now=NOW)
    store.release_slots("x", "a")
    assert not store.take_slots("x", "d", 1, limit=2, now=NOW)
    store.release_slots("x", "b")
    assert store.take_slots("x", "d", 1, limit=2, now=NOW)
    assert store.resize_limit("x", 5)
    assert store.get_limit("x").available == 3
    assert store.resize_limit("new", 7)  # resizing an unused limit creates it at that size
    assert store.get_limit("new").available == 7


def test_default_pool_exists_on_first_use_and_cannot_be_deleted(store):
    pool = store.get_pool(DEFAULT_POOL)
    assert (pool.name, pool.slots, pool.occupied) == (DEFAULT_POOL, 128, 0)
    assert [p.name for p in store.list_pools()] == [DEFAULT_POOL]
    with pytest.raises(DefaultPoolCannotBeDeleted):
        store.delete_pool(DEFAULT_POOL)
    assert store.take_slots(pool_limit(DEFAULT_POOL), "t1", 3, limit=128, now=NOW)
    assert store.get_pool(DEFAULT_POOL).occupied == 3


def test_take_on_a_fresh_table_creates_default_pool_with_its_128_slots(store):
    assert store.take_slots(pool_limit(DEFAULT_POOL), "t1", 1, limit=5, now=NOW)
    assert store.get_limit(pool_limit(DEFAULT_POOL)).limit == 128


def test_pools_are_limit_items_resized_in_place(store):
    assert store.get_pool("etl") is None
    assert not store.take_slots(pool_limit("etl"), "t1", 1, limit=3, now=NOW)  # a pool nobody created
    assert store.get_pool("etl") is None
    created = store.set_pool("etl", 2, "nightly loads")
    assert (created.slots, created.description, created.occupied) == (2, "nightly loads", 0)
    assert store.take_slots(pool_limit("etl"), "t1", 2, limit=2, now=NOW)
    assert not store.take_slots(pool_limit("etl"), "t2", 1, limit=2, now=NOW)
    grown = store.set_pool("etl", 3, "more")
    assert (grown.slots, grown.occupied, grown.description) == (3, 2, "more")
    assert store.take_slots(pool_limit("etl"), "t2", 1, limit=3, now=NOW)
    assert store.set_pool("etl", 3, "more").occupied == 3  # idempotent
    assert [p.name for p in store.list_pools()] == [DEFAULT_POOL, "etl"]
    assert store.delete_pool("etl")
    assert not store.delete_pool("etl")
    assert store.get_pool("etl") is None
    assert [p.name for p in store.list_pools()] == [DEFAULT_POOL]


def test_unlimited_pool(store):
    store.set_pool("free", -1)
    for i in range(5):
        assert store.take_slots(pool_limit("free"), f"t{i}", 10, limit=-1, now=NOW)
    assert store.get_pool("free").occupied == 50
    store.set_pool("free", 60)  # back to a finite size: 10 left
    assert store.take_slots(pool_limit("free"), "t9", 10, limit=60, now=NOW)
    assert not store.take_slots(pool_limit("free"), "t10", 1, limit=60, now=NOW)


def test_invalid_pool_size(store):
    with pytest.raises(ValueError):
        store.set_pool("bad", -2)


def test_eight_threads_never_over_admit_a_three_slot_limit_while_it_is_resized(store, serialized_moto):
    limit_id, size, threads, rounds = "pool:tight", 3, 8, 12
    store.set_pool("tight", size)
    occupancy_lock = threading.Lock()
    holding: set[str] = set()
    max_seen = [0]
    wins: collections.Counter[str] = collections.Counter()
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            start.wait()
            for r in range(rounds):
                holder = f"w{n}-r{r}"
                if not store.take_slots(limit_id, holder, 1, limit=size, now=NOW):
                    continue
                with occupancy_lock:
                    assert holder not in holding
                    holding.add(holder)
                    wins[holder] += 1
                    max_seen[0] = max(max_seen[0], len(holding))
                # A retried take of a held holder (a duplicate delivery) never counts it twice.
                assert not store.take_slots(limit_id, holder, 1, limit=size, now=NOW)
                # The item is the authority: never more holders than the largest size it had, and its
                # accounting always adds up, even while a resize moves the limit under the takers.
                state = store.get_limit(limit_id)
                assert len(state.holders) <= size
                assert state.available == state.limit - sum(state.holders.values())
                with occupancy_lock:
                    holding.discard(holder)
                assert store.release_slots(limit_id, holder)
                assert not store.release_slots(limit_id, holder)
        except BaseException as exc:
            errors.append(exc)

    def resizer() -> None:
        try:
            for new_size in (2, 3, 1, 3, 2, 3):
                assert store.resize_limit(limit_id, new_size)
        except BaseException as exc:
            errors.append(exc)

    start = threading.Barrier(threads + 1)
    pool = [threading.Thread(target=worker, args=(n,)) for n in range(threads)]
    pool.append(threading.Thread(target=lambda: (start.wait(), resizer())))
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    assert errors == []
    assert max_seen[0] <= size
    assert max_seen[0] >= 2  # the threads did overlap
    assert all(count == 1 for count in wins.values())
    final = store.get_limit(limit_id)
    assert (final.available, final.holders) == (size, {})


def test_concurrent_resizes_never_lose_a_delta(store, serialized_moto):
    store.take_slots("r", "held", 1, limit=10, now=NOW)
    sizes = [4, 7, 2, 9, 5, 3, 8, 6]
    barrier = threading.Barrier(len(sizes))

    def resize(size: int) -> None:
        barrier.wait()
        assert store.resize_limit("r", size)

    threads = [threading.Thread(target=resize, args=(s,)) for s in sizes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    state = store.get_limit("r")
    assert state.available == state.limit - 1  # whichever size won, the held slot is still counted
