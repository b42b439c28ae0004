"""The pool reads a scheduler pass makes (issue 19): a pool's size in one read whatever its shards, and the pools'
names without reading any pool, neither creating anything."""

from __future__ import annotations

import pendulum

from tests.dynamo_requests import dynamo_requests, operations
from tests.functional.chaos.dynamo_faults import DynamoFaults
from updraft.model.limits import DEFAULT_POOL, pool_limit

NOW = pendulum.datetime(2024, 1, 1, tz="UTC")


def test_a_pools_size_is_one_read_whatever_its_shards(store):
    store.set_pool("wide", 20)
    for n in range(6):  # more holders than a root takes: the pool spreads over shards
        assert store.take_slots(pool_limit("wide"), f"h{n}", 1, limit=20, now=NOW)
    with dynamo_requests() as ops:
        assert store.pool_slots("wide") == 20
    assert operations(ops) == ["BatchGetItem"]
    assert store.pool_slots("nope") is None
    store.delete_pool("wide")
    assert store.pool_slots("wide") is None


def test_a_missing_default_pool_is_read_as_missing_and_not_created(store):
    with DynamoFaults().installed() as writes:
        assert store.pool_slots(DEFAULT_POOL) is None
        assert store.pool_names() == [DEFAULT_POOL]
    assert writes.writes == 0


def test_pool_names_come_from_the_pools_list(store):
    store.set_pool("b", 2)
    store.set_pool("a", 3)
    with dynamo_requests() as ops:
        assert store.pool_names() == ["a", "b", DEFAULT_POOL]
    assert operations(ops) == ["Query"]
    store.delete_pool("b")
    assert store.pool_names() == ["a", DEFAULT_POOL]
