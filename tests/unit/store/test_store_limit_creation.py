"""A limit's creation is its first take (issue 19): the root is put holding the take's entry, so a limit nobody used
costs its first take two writes (the refused take, the creating put), or one when the caller expects it new
(``take_slots(new=True)``: a run's own limits in the pass that started it). Never over the limit, idempotent,
the same item as a creation followed by a take."""

from __future__ import annotations

import collections

import pendulum

from tests.dynamo_requests import dynamo_requests, operations
from tests.functional.chaos.dynamo_faults import DynamoFaults
from updraft.model.limits import DEFAULT_POOL, DEFAULT_POOL_SLOTS, pool_limit
from updraft.store.dynamo import DynamoStore
from updraft.store.limit_api import Taken

NOW = pendulum.datetime(2024, 1, 1, tz="UTC")


def test_an_expected_new_limit_is_created_by_its_first_take_in_one_write(store):
    with dynamo_requests() as ops:
        assert store.take_slots("run_tasks:d:r", "a", 1, limit=2, now=NOW, new=True) is Taken.YES
    assert operations(ops) == ["PutItem"]
    with dynamo_requests() as ops:  # known now: the hint is not followed twice
        assert store.take_slots("run_tasks:d:r", "b", 1, limit=2, now=NOW, new=True) is Taken.YES
    assert operations(ops) == ["UpdateItem"]
    assert store.take_slots("run_tasks:d:r", "c", 1, limit=2, now=NOW, new=True) is Taken.FULL
    state = store.get_limit("run_tasks:d:r")
    assert (state.limit, state.available, state.holders) == (2, 0, {"a": 1, "b": 1})


def test_a_wrong_guess_costs_one_refused_write_and_never_counts_twice(store, config, s3):
    store.take_slots("x", "a", 1, limit=2, now=NOW)
    other = DynamoStore(config, s3_client=s3)  # a process that never saw the limit
    with dynamo_requests() as ops:
        assert other.take_slots("x", "b", 1, limit=2, new=True, now=NOW) is Taken.YES
    assert operations(ops) == ["PutItem", "UpdateItem"]
    assert DynamoStore(config, s3_client=s3).take_slots("x", "a", 1, limit=2, new=True, now=NOW) is Taken.HELD
    assert store.get_limit("x").holders == {"a": 1, "b": 1}


def test_racing_first_takes_never_pass_the_limit(store, config, s3):
    stores = [store] + [DynamoStore(config, s3_client=s3) for _ in range(3)]
    results = [s.take_slots("one", f"h{n}", 1, limit=1, now=NOW, new=n % 2 == 0) for n, s in enumerate(stores)]
    assert collections.Counter(results) == {Taken.YES: 1, Taken.FULL: 3}
    assert store.get_limit("one").available == 0


def test_a_take_bigger_than_the_new_root_creates_it_then_grows_it(store):
    assert store.take_slots("wide", "big", 6, limit=40, now=NOW, new=True) is Taken.YES  # a root offers 4
    state = store.get_limit("wide")
    assert (state.available, state.holders) == (34, {"big": 6})
    assert store.take_slots("none", "h", 1, limit=0, now=NOW) is Taken.FULL  # created, holding nobody
    assert store.get_limit("none").holders == {}


def test_an_unlimited_limit_is_created_holding_its_first_take(store):
    with dynamo_requests() as ops:
        assert store.take_slots("fence", "req", 0, limit=-1, now=NOW) is Taken.YES
    assert operations(ops) == ["UpdateItem", "PutItem"]
    assert store.take_slots("fence", "req", 0, limit=-1, now=NOW) is Taken.HELD  # the fence holds


def test_a_lost_acknowledgement_of_the_creating_put_is_the_take(store):
    with DynamoFaults("lost_ack", 1).installed() as faults:
        assert store.take_slots("run_tasks:d:r", "a", 1, limit=2, now=NOW, new=True) is Taken.YES
    assert faults.fired == "PutItem"
    with DynamoFaults("lost_ack", 2).installed() as faults:  # after the refused take
        assert store.take_slots("y", "a", 1, limit=2, now=NOW) is Taken.YES
    assert faults.fired == "PutItem"
    for limit_id in ("run_tasks:d:r", "y"):
        state = store.get_limit(limit_id)
        assert (state.available, state.holders) == (1, {"a": 1})


def test_the_default_pool_created_by_a_take_has_its_record(store, config, s3):
    assert store.take_slots(pool_limit(DEFAULT_POOL), "a", 1, limit=DEFAULT_POOL_SLOTS, now=NOW) is Taken.YES
    pool = DynamoStore(config, s3_client=s3).get_pool(DEFAULT_POOL)
    assert (pool.slots, pool.occupied, pool.description) == (DEFAULT_POOL_SLOTS, 1, "Default pool")
