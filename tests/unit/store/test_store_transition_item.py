"""``transition_item`` and its kin (a reset, an instance's deletion, a run's state, creation and deletion): a write
built as a transaction item (for ``updraft.limits``), with the holder's ticket condition; nothing is written until
the transaction is sent."""

from __future__ import annotations

import datetime as dt

import pytest
from botocore.exceptions import ClientError

from updraft.model.records import DagRun, TIKey
from updraft.model.states import DagRunState, TaskInstanceState

S = TaskInstanceState
KEY = TIKey("d", "r", "t")
NOW = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


def send(store, *writes) -> bool:
    client = store.models.task_instance._get_connection().connection.client
    try:
        client.transact_write_items(TransactItems=[write.item for write in writes])
    except ClientError as exc:
        if exc.response["Error"]["Code"] != "TransactionCanceledException":
            raise
        return False
    return True


def test_the_write_waits_for_its_transaction_and_lands_with_its_ticket(store):
    store.create_ti(KEY, state=S.SCHEDULED)
    store.set_blocked_reason(KEY, "pool 'p' is full", priority_weight=3)  # (in its run's waiting index)
    assert store.waiting_tis("d", "r", limit=5) == [KEY]
    write = store.transition_item(KEY, expected=[S.SCHEDULED], state=S.QUEUED, ticket="T1", held_ticket=None,
                                  fields={"try_id": "a", "try_number": 1})
    assert store.get_ti(KEY).state == S.SCHEDULED and not write.landed()
    assert send(store, write) and write.landed()
    ti = store.get_ti(KEY)
    assert (ti.state, ti.try_id, ti.ticket, ti.blocked_reason) == (S.QUEUED, "a", "T1", None)
    assert store.waiting_tis("d", "r", limit=5) == []  # queued: out of the waiting index, as transition_ti does


def test_its_conditions_are_transition_tis_and_the_ticket_it_carries(store):
    store.create_ti(KEY, state=S.SCHEDULED)
    assert send(store, store.transition_item(KEY, expected=[S.SCHEDULED], state=S.QUEUED, ticket="T1",
                                             held_ticket=None, fields={"try_id": "a"}))
    def end(**kwargs):
        return store.transition_item(KEY, expected=[S.QUEUED], state=S.SUCCESS, ticket=None, **kwargs)

    assert not send(store, end(held_ticket=None))  # it carries a ticket
    assert not send(store, end(held_ticket="T2"))  # another one
    assert not send(store, end(held_ticket="T1", expected_try_id="b"))  # another try's
    assert not send(store, store.transition_item(KEY, expected=[S.RUNNING], state=S.SUCCESS, ticket=None,
                                                 held_ticket="T1"))  # another state
    assert send(store, end(held_ticket="T1", expected_try_id="a"))
    ti = store.get_ti(KEY)
    assert (ti.state, ti.ticket) == (S.SUCCESS, None)


def test_it_refuses_what_transition_ti_refuses(store):
    with pytest.raises(ValueError, match="not settable"):
        store.transition_item(KEY, expected=[S.SCHEDULED], state=S.QUEUED, ticket=None, held_ticket=None,
                              fields={"ticket": "T"})
    with pytest.raises(ValueError, match="no expected state"):
        store.transition_item(KEY, expected=[], state=S.QUEUED, ticket=None, held_ticket=None)


def _queued_with(store, ticket: str) -> None:
    store.create_ti(KEY, state=S.SCHEDULED)
    assert send(store, store.transition_item(KEY, expected=[S.SCHEDULED], state=S.QUEUED, ticket=ticket,
                                             held_ticket=None, fields={"try_id": "a", "try_number": 1}))


def test_a_reset_item_is_reset_tis_write_conditional_on_the_ticket_and_removing_it(store):
    _queued_with(store, "T1")

    def reset(**kwargs):
        return store.reset_item(KEY, fields={"max_tries": 3}, **kwargs)

    assert not send(store, reset(expected=S.QUEUED, expected_try_id="a", held_ticket="T2"))  # another ticket
    assert not send(store, reset(expected=S.QUEUED, expected_try_id="b", held_ticket="T1"))  # another try's
    assert not send(store, reset(expected=S.RUNNING, expected_try_id="a", held_ticket="T1"))  # another state
    write = reset(expected=S.QUEUED, expected_try_id="a", held_ticket="T1")
    assert store.get_ti(KEY).state == S.QUEUED and not write.landed()
    assert send(store, write) and write.landed()
    ti = store.get_ti(KEY)
    assert (ti.state, ti.try_id, ti.ticket, ti.try_number, ti.max_tries) == (None, None, None, 1, 3)


def test_a_deletion_item_deletes_the_instance_only_while_it_carries_the_ticket(store):
    _queued_with(store, "T1")
    assert not send(store, store.delete_ti_item(KEY, held_ticket="T2"))
    write = store.delete_ti_item(KEY, held_ticket="T1")
    assert store.get_ti(KEY) is not None and not write.landed()
    assert send(store, write) and write.landed() and store.get_ti(KEY) is None
    assert not send(store, store.delete_ti_item(KEY, held_ticket="T1"))  # a repeat: nothing to delete


def test_a_runs_state_item_carries_its_ticket_and_is_conditional_on_the_one_it_holds(store):
    R = DagRunState
    store.create_run(DagRun("d", "r", "manual", "h"))
    start = store.run_state_item("d", "r", expected=[R.QUEUED], state=R.RUNNING, now=NOW, ticket="T1",
                                 held_ticket=None)
    assert store.get_run("d", "r").state == R.QUEUED and not start.landed()
    assert send(store, start) and start.landed()
    assert (store.get_run("d", "r").state, store.get_run("d", "r").ticket) == (R.RUNNING, "T1")

    def end(**kwargs):
        return store.run_state_item("d", "r", state=R.SUCCESS, now=NOW, ticket=None, **kwargs)

    assert not send(store, end(expected=[R.RUNNING], held_ticket=None))  # it carries one
    assert not send(store, end(expected=[R.RUNNING], held_ticket="T2"))  # another
    assert not send(store, end(expected=[R.QUEUED], held_ticket="T1"))  # another state
    assert send(store, end(expected=[R.RUNNING], held_ticket="T1"))
    run = store.get_run("d", "r")
    assert (run.state, run.ticket) == (R.SUCCESS, None) and run not in store.active_runs()


def test_a_run_created_or_deleted_in_a_transaction_with_its_ticket(store):
    R = DagRunState
    created = store.create_run_item(DagRun("d", "b", "backfill", "h"), ticket="T1")
    assert send(store, created) and created.landed() and store.get_run("d", "b").ticket == "T1"
    assert not send(store, store.create_run_item(DagRun("d", "b", "backfill", "h"), ticket="T2"))  # exists
    assert not send(store, store.delete_run_item("d", "b", expected=[R.QUEUED], held_ticket="T2"))
    assert not send(store, store.delete_run_item("d", "b", expected=[R.SUCCESS], held_ticket="T1"))
    deleted = store.delete_run_item("d", "b", expected=[R.QUEUED], held_ticket="T1")
    assert send(store, deleted) and deleted.landed() and store.get_run("d", "b") is None


def test_a_runs_callback_fence_lets_each_request_through_once_and_goes_with_the_run(store):
    store.create_run(DagRun("d", "r", "manual", "h"))
    assert store.claim_callback("d", "r", "dcb-1")
    assert not store.claim_callback("d", "r", "dcb-1")  # a duplicate delivery
    assert store.claim_callback("d", "r", "tcb-2") and store.get_run_tis("d", "r") == []  # not an instance
    assert store.delete_run_partition("d", "r") == 2
    assert store.claim_callback("d", "r", "dcb-1")  # its fence went with the run's partition
