"""Pools in the store: a pool is its record (size, description, include_deferred), read in one request; default_pool
exists from its first read and cannot be deleted."""

from __future__ import annotations

import pytest

from tests.dynamo_requests import dynamo_requests, operations
from updraft.model.limits import DEFAULT_POOL
from updraft.store.errors import DefaultPoolCannotBeDeleted


def test_a_pools_size_is_one_read(store):
    store.set_pool("wide", 20)
    with dynamo_requests() as ops:
        assert store.pool_slots("wide") == 20
    assert operations(ops) == ["GetItem"]
    assert store.pool_slots("nope") is None
    store.delete_pool("wide")
    assert store.pool_slots("wide") is None


def test_default_pool_exists_on_first_read_and_cannot_be_deleted(store):
    assert store.pool_slots(DEFAULT_POOL) == 128
    pool = store.get_pool(DEFAULT_POOL)
    assert (pool.name, pool.slots, pool.description) == (DEFAULT_POOL, 128, "Default pool")
    assert [p.name for p in store.list_pools()] == [DEFAULT_POOL]
    with pytest.raises(DefaultPoolCannotBeDeleted):
        store.delete_pool(DEFAULT_POOL)
    assert store.set_pool(DEFAULT_POOL, 4).slots == 4
    assert store.pool_slots(DEFAULT_POOL) == 4


def test_pools_are_created_resized_and_deleted(store):
    assert store.get_pool("etl") is None
    created = store.set_pool("etl", 2, "nightly loads")
    assert (created.slots, created.description, created.include_deferred) == (2, "nightly loads", False)
    assert store.set_pool("etl", 3, "more", include_deferred=True).include_deferred
    grown = store.set_pool("etl", 5, "more")  # include_deferred None: kept
    assert (grown.slots, grown.description, grown.include_deferred) == (5, "more", True)
    assert store.get_pool("etl") == grown
    assert [p.name for p in store.list_pools()] == [DEFAULT_POOL, "etl"]
    assert store.delete_pool("etl")
    assert not store.delete_pool("etl")
    assert store.get_pool("etl") is None
    assert [p.name for p in store.list_pools()] == [DEFAULT_POOL]


def test_unlimited_pool(store):
    assert store.set_pool("free", -1).slots == -1
    assert store.pool_slots("free") == -1


def test_invalid_pool_size(store):
    with pytest.raises(ValueError):
        store.set_pool("bad", -2)
