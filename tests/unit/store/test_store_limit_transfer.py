"""A slot transfer (``store/limit_transfer.py``): an ended try's slots go to a new holder in one conditional write,
never over the limit, and every case one write cannot decide changes nothing (the caller takes and releases)."""

from __future__ import annotations

import pendulum

from tests.functional.chaos.dynamo_faults import DynamoFaults
from updraft.model.limits import pool_limit

NOW = pendulum.datetime(2024, 1, 1, tz="UTC")
LONG = "d|r|" + "t" * 200 + "|-1|1"  # a holder whose name lives in a name item of its own


def test_a_transfer_swaps_the_holders_in_one_write_and_keeps_the_count(store):
    store.take_slots("x", "a", 1, limit=2, now=NOW)
    store.take_slots("x", "b", 1, limit=2, now=NOW)  # full
    with DynamoFaults().installed() as writes:
        assert store.transfer_slots("x", "a", 1, "c", 1, now=NOW.add(seconds=5))
    assert writes.writes == 1
    state = store.get_limit("x")
    assert (state.available, state.holders) == (0, {"b": 1, "c": 1})
    assert state.taken_at["c"] == NOW.add(seconds=5)  # the new holder's own time: reconciliation's grace
    assert not store.release_slots("x", "a")  # the donor holds nothing any more
    assert store.release_slots("x", "c")
    assert store.get_limit("x").available == 1


def test_a_larger_holder_needs_room_for_the_difference_and_a_smaller_gives_it_back(store):
    store.set_pool("p", 3)
    limit = pool_limit("p")
    store.take_slots(limit, "a", 1, limit=3, now=NOW)
    store.take_slots(limit, "b", 1, limit=3, now=NOW)
    assert store.transfer_slots(limit, "a", 1, "c", 2, now=NOW)  # one more slot: the one free
    assert store.get_limit(limit).available == 0
    assert not store.transfer_slots(limit, "c", 2, "d", 3, now=NOW)  # one more again: none free
    assert store.get_limit(limit).holders == {"b": 1, "c": 2}
    assert store.transfer_slots(limit, "c", 2, "e", 1, now=NOW)
    state = store.get_limit(limit)
    assert (state.available, state.holders) == (1, {"b": 1, "e": 1})
    assert store.get_pool("p").occupied == 2


def test_refused_transfers_change_nothing(store):
    store.take_slots("x", "a", 1, limit=3, now=NOW)
    store.take_slots("x", "b", 1, limit=3, now=NOW)
    before = store.get_limit("x")
    assert not store.transfer_slots("x", "nobody", 1, "c", 1, now=NOW)  # the donor holds nothing
    assert not store.transfer_slots("x", "a", 2, "c", 1, now=NOW)  # not the slots the caller expects
    assert not store.transfer_slots("x", "a", 1, "b", 1, now=NOW)  # the new holder holds already
    assert not store.transfer_slots("x", "a", 1, LONG, 1, now=NOW)  # a name item to write: take instead
    assert not store.transfer_slots("never-created", "a", 1, "c", 1, now=NOW)
    assert store.get_limit("x") == before
    assert store.get_limit("never-created") is None


def test_a_sharded_limit_is_not_transferred_even_by_a_process_that_never_read_it(store):
    store.set_pool("wide", 20)
    limit = pool_limit("wide")
    for n in range(6):  # more holders than the root takes: the limit spreads over shards
        assert store.take_slots(limit, f"h{n}", 1, limit=20, now=NOW)
    before = store.get_limit(limit)
    with DynamoFaults().installed() as writes:
        assert not store.transfer_slots(limit, "h0", 1, "new", 1, now=NOW)
    assert writes.writes == 0  # known sharded: no write tried
    store._limit_shapes.clear()  # another process: the root's ``active`` refuses it
    assert not store.transfer_slots(limit, "h0", 1, "new", 1, now=NOW)
    assert store.get_limit(limit) == before


def test_an_unlimited_limit_transfers_any_slots(store):
    store.take_slots("u", "a", 1, limit=-1, now=NOW)
    assert store.transfer_slots("u", "a", 1, "b", 5, now=NOW)
    assert store.get_limit("u").holders == {"b": 5}


def test_a_lost_acknowledgement_of_a_transfer_counts_as_done(store):
    store.take_slots("x", "a", 1, limit=1, now=NOW)
    with DynamoFaults("lost_ack", 1).installed() as faults:
        assert store.transfer_slots("x", "a", 1, "b", 1, now=NOW)
    assert faults.fired == "UpdateItem"
    state = store.get_limit("x")
    assert (state.available, state.holders) == (0, {"b": 1})
    # Not a lost race dressed as success: a holder that holds already (a retried claim) stays refused.
    store.take_slots("y", "a", 1, limit=2, now=NOW)
    store.take_slots("y", "b", 1, limit=2, now=NOW)
    with DynamoFaults("lost_ack", 1).installed():
        assert not store.transfer_slots("y", "a", 1, "b", 1, now=NOW)
