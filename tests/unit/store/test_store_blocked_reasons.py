"""Why a task instance is not running: the last reason is kept on its item, and queuing it clears it."""

from __future__ import annotations

from updraft.model.records import TaskInstance, TIKey
from updraft.model.states import TaskInstanceState

S = TaskInstanceState
KEY = TIKey("d", "r", "t")


def test_blocked_reason_is_set_while_scheduled_and_read_back(store):
    store.transition_ti(KEY, expected=[None], state=S.SCHEDULED)
    assert store.set_blocked_reason(KEY, "pool 'p' is full (0 of 2 slots open)")
    assert store.get_ti(KEY).blocked_reason == "pool 'p' is full (0 of 2 slots open)"
    assert store.set_blocked_reason(KEY, "max_active_tasks (16) reached")  # the last reason wins
    assert [ti.blocked_reason for ti in store.get_run_tis("d", "r")] == ["max_active_tasks (16) reached"]
    assert store.set_blocked_reason(KEY, None)
    assert store.get_ti(KEY).blocked_reason is None


def test_blocked_reason_is_refused_outside_the_expected_state(store):
    assert not store.set_blocked_reason(KEY, "pool missing")  # no item yet: nothing to explain
    assert store.get_ti(KEY) is None
    store.transition_ti(KEY, expected=[None], state=S.RUNNING, fields={"try_id": "x"})
    assert not store.set_blocked_reason(KEY, "pool missing")
    assert store.get_ti(KEY).blocked_reason is None
    assert store.set_blocked_reason(KEY, "still running", expected_state=S.RUNNING)


def test_a_claim_to_queued_clears_the_blocked_reason(store):
    store.transition_ti(KEY, expected=[None], state=S.SCHEDULED)
    store.set_blocked_reason(KEY, "parallelism (32) reached")
    assert store.transition_ti(KEY, expected=[S.SCHEDULED], state=S.QUEUED, fields={"try_id": "x"})
    ti = store.get_ti(KEY)
    assert ti.state == S.QUEUED and ti.blocked_reason is None


def test_other_transitions_keep_the_blocked_reason(store):
    store.transition_ti(KEY, expected=[None], state=S.SCHEDULED)
    store.set_blocked_reason(KEY, "upstream 'a' failed")
    assert store.transition_ti(KEY, expected=[S.SCHEDULED], state=S.UPSTREAM_FAILED)
    assert store.get_ti(KEY).blocked_reason == "upstream 'a' failed"


def test_blocked_reason_round_trips_on_creation(store):
    ti = TaskInstance("d", "r", "t", state=S.SCHEDULED, blocked_reason="pool 'p' does not exist")
    assert store.transition_ti(ti.key, expected=[None], state=S.SCHEDULED,
                               fields={"blocked_reason": ti.blocked_reason})
    assert store.get_ti(ti.key) == ti


def test_named_transitions_create_queue_and_end_a_try(store):
    assert store.create_ti(KEY, state=S.SCHEDULED)
    assert not store.create_ti(KEY, state=S.SKIPPED)  # exists: the first state stays
    store.set_blocked_reason(KEY, "pool 'p' is full")
    assert store.queue_ti(KEY, expected=S.SCHEDULED, fields={"try_id": "x", "try_number": 1})
    assert not store.queue_ti(KEY, expected=S.SCHEDULED, fields={"try_id": "y", "try_number": 1})
    ti = store.get_ti(KEY)
    assert (ti.state, ti.try_id, ti.blocked_reason) == (S.QUEUED, "x", None)
    assert store.start_ti(KEY, try_id="x", fields={}) is not None
    assert not store.end_try(KEY, try_id="stale", state=S.SUCCESS, fields={})
    assert store.end_try(KEY, try_id="x", state=S.SUCCESS, fields={"note": "done"})
    assert store.get_ti(KEY).state == S.SUCCESS
    other = TIKey("d", "r", "u")
    assert store.queue_ti(other, expected=None, fields={"try_id": "z", "try_number": 1})  # created claimed
    assert store.get_ti(other).state == S.QUEUED
