"""acquire, release, ensure, resize, rebalance and room on moto (which runs a transaction atomically): what each
writes, and how each cancellation is read."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError
from limits_helpers import LostAcknowledgement, S, check_accounts, claim, counters, end, queue, scheduled

from updraft.limits import (
    Acquired,
    Backoff,
    Claim,
    Contended,
    Frees,
    Full,
    Lost,
    Need,
    Table,
    Ticket,
    acquire,
    ensure,
    rebalance,
    release,
    resize,
    room,
)
from updraft.limits.release import RELEASE_ATTEMPTS, RELEASE_CAP_S
from updraft.limits.shards import UNLIMITED
from updraft.model.records import TIKey
from updraft.store import keys

POOL = "pool:p"


def pool(slots: int = 1, size: int = 10) -> Need:
    return Need(POOL, slots, size)


def shards_of(table: Table, limit_id: str = POOL) -> list[tuple[int, int]]:
    return [(c.share, c.free) for c in counters(table)[keys.limit_pk(limit_id)]]


# ------------------------------------------------------------------------------------------------------ acquire
def test_an_acquire_queues_the_instance_and_takes_its_limits_in_one_transaction(store, table):
    key = scheduled(store, "t")
    result = acquire(table, [claim(store, key, pool(2), Need("parallelism", 1, 32))])
    assert isinstance(result, Acquired)
    (ticket,) = result.tickets
    ti = store.get_ti(key)
    assert ti.state == S.QUEUED and ti.try_id and ti.ticket == ticket.encode()
    assert ticket.limit_ids == ("parallelism", POOL) and ticket.slots(POOL) == 2
    assert shards_of(table) == [(10, 8)] and shards_of(table, "parallelism") == [(32, 31)]
    check_accounts(table)


def test_a_batch_takes_each_limit_once_for_all_its_holders(store, table):
    batch = [scheduled(store, f"t{i}") for i in range(25)]
    result = acquire(table, [claim(store, key, pool(size=128), Need("run", 1, 100)) for key in batch])
    assert isinstance(result, Acquired) and len(result.tickets) == 25
    assert sum(c.free for c in counters(table)[keys.limit_pk(POOL)]) == 128 - 25
    assert all(store.get_ti(key).state == S.QUEUED for key in batch)
    assert check_accounts(table) == {keys.limit_pk(POOL): 25, keys.limit_pk("run"): 25}


def test_a_full_limit_refuses_the_whole_claim_and_says_its_room(store, table):
    first = scheduled(store, "a")
    assert isinstance(acquire(table, [claim(store, first, pool(8))]), Acquired)
    batch = [scheduled(store, f"t{i}") for i in range(3)]
    result = acquire(table, [claim(store, key, pool(1), Need("other", 1, 5)) for key in batch])
    assert result == Full(POOL, 2)  # (a one-shard limit's refusal carries its counter: no read)
    assert all(store.get_ti(key).state == S.SCHEDULED and store.get_ti(key).ticket is None for key in batch)
    assert keys.limit_pk("other") not in counters(table)  # the transaction that would create it was cancelled
    check_accounts(table)


def test_a_claimed_instance_is_lost_and_named_and_nothing_is_taken(store, table):
    keys_ = [scheduled(store, f"t{i}") for i in range(3)]
    assert isinstance(acquire(table, [claim(store, keys_[1], pool())]), Acquired)
    result = acquire(table, [claim(store, key, pool()) for key in keys_])
    assert result == Lost((1,))
    assert shards_of(table) == [(10, 9)]
    assert isinstance(acquire(table, [claim(store, keys_[0], pool()), claim(store, keys_[2], pool())]), Acquired)
    check_accounts(table)


def test_an_instance_created_claimed_is_created_by_its_acquire_once(store, table):
    """The pass that schedules a new instance may claim it at once: its write creates it queued."""
    key = TIKey("d", "r", "new")

    def create(ticket, held):
        return store.transition_item(key, expected=[None], state=S.QUEUED, ticket=ticket, held_ticket=held,
                                     fields={"try_id": "try-new", "try_number": 1, "pool": "p", "pool_slots": 2})

    (ticket,) = acquire(table, [Claim(create, (pool(2),))]).tickets
    ti = store.get_ti(key)
    assert (ti.state, ti.try_id, ti.pool, ti.pool_slots, ti.ticket) == (S.QUEUED, "try-new", "p", 2, ticket.encode())
    assert ti.priority_weight == 1 and ti.map_index == -1  # what the update did not write reads as its default
    assert acquire(table, [Claim(create, (pool(2),))]) == Lost((0,))
    assert check_accounts(table) == {keys.limit_pk(POOL): 2}


def test_an_instance_carrying_a_ticket_is_not_claimed_over_it(store, table):
    """The holder's write asks for the ticket it replaces (none for a fresh claim): a ticket is never lost."""
    key = scheduled(store, "t")
    held = Ticket.new()
    store.transition_ti(key, expected=[S.SCHEDULED], state=S.SCHEDULED, fields={"ticket": held.encode()})
    assert acquire(table, [claim(store, key, pool())]) == Lost((0,))


def test_a_resumed_holder_adds_to_the_ticket_it_kept(store, table):
    key = scheduled(store, "t")
    (ticket,) = acquire(table, [claim(store, key, pool(), Need("run", 1, 4))]).tickets
    # deferred: its pool slot is kept (include_deferred), the rest given back
    assert release(table, end(store, key, S.DEFERRED), ticket, keep={POOL})
    kept = Ticket.decode(store.get_ti(key).ticket)
    assert kept.limit_ids == (POOL,) and kept.ticket_id == ticket.ticket_id
    store.transition_ti(key, expected=[S.DEFERRED], state=S.SCHEDULED)
    result = acquire(table, [Claim(queue(store, key), (Need("run", 1, 4),), held=kept)])
    assert isinstance(result, Acquired)
    assert result.tickets[0].limit_ids == (POOL, "run") and result.tickets[0].ticket_id == ticket.ticket_id
    assert check_accounts(table) == {keys.limit_pk(POOL): 1, keys.limit_pk("run"): 1}
    with pytest.raises(ValueError, match="it holds"):
        acquire(table, [Claim(queue(store, key), (pool(),), held=kept)])


def test_a_short_shard_sends_the_take_to_the_shard_with_room(store, table):
    ensure(table, POOL, 128)  # two shards of 64
    assert shards_of(table) == [(64, 64), (64, 64)]
    holders = [scheduled(store, f"t{i}") for i in range(2)]
    assert isinstance(acquire(table, [claim(store, holders[0], pool(60, 128))]), Acquired)
    taken_from = 0 if shards_of(table)[0][1] == 4 else 1
    # the next take of 10 fits only the other shard, wherever it tries first
    result = acquire(table, [claim(store, holders[1], pool(10, 128))])
    assert isinstance(result, Acquired) and result.tickets[0].holds[0].shard == 1 - taken_from
    check_accounts(table)


def _counting_transactions(monkeypatch) -> list[int]:
    """The number of items of every transaction the limits' table sends from now on."""
    sent: list[int] = []
    real = Table.transact

    def transact(self, items):
        sent.append(len(items))
        return real(self, items)

    monkeypatch.setattr(Table, "transact", transact)
    return sent


def test_a_claimer_s_frees_send_each_take_to_a_shard_that_had_room_in_one_transaction(store, table, monkeypatch):
    ensure(table, POOL, 256)  # four shards of 64
    known = Frees()
    known.saw(POOL, [64, 64, 64, 64])  # as a read found them
    sent = _counting_transactions(monkeypatch)
    shards = []
    for i in range(4):  # 40 each: a shard holds one such take, so each must go to another shard
        result = acquire(table, [claim(store, scheduled(store, f"t{i}"), pool(40, 256))], known)
        assert isinstance(result, Acquired)
        shards.append(result.tickets[0].holds[0].shard)
    assert sorted(shards) == [0, 1, 2, 3] and sent == [2, 2, 2, 2]  # no take met a short shard
    assert known.first(POOL, 40, "any") is None and known.first(POOL, 24, "any") is not None  # its own takes
    check_accounts(table)


def test_frees_gone_stale_cost_a_read_never_a_slot_over_the_limit(store, table, monkeypatch):
    ensure(table, POOL, 128)  # two shards of 64
    assert isinstance(acquire(table, [claim(store, scheduled(store, "other"), pool(64, 128))]), Acquired)
    taken = 0 if shards_of(table)[0][1] == 0 else 1  # by another claimer: this one's memory does not know
    known = Frees()
    known.saw(POOL, [64, 64])
    sent = _counting_transactions(monkeypatch)
    for i in range(2):
        result = acquire(table, [claim(store, scheduled(store, f"t{i}"), pool(32, 128))], known)
        assert isinstance(result, Acquired) and result.tickets[0].holds[0].shard == 1 - taken
    assert len(sent) <= 3  # at most one take met the full shard, and the read it made corrected the memory
    assert acquire(table, [claim(store, scheduled(store, "more"), pool(1, 128))], known) == Full(POOL, 0)
    assert check_accounts(table) == {keys.limit_pk(POOL): 128}


def test_room_spread_over_shards_is_rebalanced_into_one(store, table):
    ensure(table, POOL, 128)
    for shard in (0, 1):  # 40 held on each shard: 24 + 24 free, no shard has 30
        assert rebalance(table, POOL, {shard: -40, 1 - shard: 40})
        key = scheduled(store, f"h{shard}")
        assert isinstance(acquire(table, [claim(store, key, pool(40, 128))]), Acquired)
    assert sorted(free for _, free in shards_of(table)) == [24, 24]
    result = acquire(table, [claim(store, scheduled(store, "big"), pool(30, 128))])
    assert isinstance(result, Acquired)
    assert check_accounts(table) == {keys.limit_pk(POOL): 110}
    assert room(table, POOL) == 18
    assert acquire(table, [claim(store, scheduled(store, "more"), pool(19, 128))]) == Full(POOL, 18)


def test_a_rebalance_refuses_to_move_held_slots(store, table):
    ensure(table, POOL, 128)
    key = scheduled(store, "t")
    (ticket,) = acquire(table, [claim(store, key, pool(60, 128))]).tickets
    shard = ticket.holds[0].shard
    assert not rebalance(table, POOL, {shard: -10, 1 - shard: 10})
    assert rebalance(table, POOL, {shard: -4, 1 - shard: 4})
    assert shards_of(table)[shard] == (60, 0)
    with pytest.raises(ValueError, match="does not make them"):
        rebalance(table, POOL, {0: 1})
    check_accounts(table)


def test_a_resent_acquire_is_recognised_as_its_own(store, table):
    """A transaction that landed but whose acknowledgement was lost is sent again by the SDK: its holder's
    condition then fails against its own write, which the holder's write token tells apart from a lost race."""
    key = scheduled(store, "t")
    lossy = Table(LostAcknowledgement(table.client), table.name)
    result = acquire(lossy, [claim(store, key, pool())])
    assert isinstance(result, Acquired) and store.get_ti(key).ticket == result.tickets[0].encode()
    assert check_accounts(table) == {keys.limit_pk(POOL): 1}
    other = scheduled(store, "other")
    assert isinstance(acquire(table, [claim(store, other, pool())]), Acquired)
    # a resent claim that meets another scheduler's claim is still lost
    assert acquire(lossy, [claim(store, other, pool())]) == Lost((0,))


@pytest.mark.parametrize("code", ["TransactionConflict", "ThrottlingError"])
def test_a_conflict_is_retried_after_a_jittered_pause_and_gives_up_contended(store, table, pauses, code):
    key = scheduled(store, "t")
    flaky = Table(Cancelling(table.client, code, times=2), table.name, table.backoff)
    assert isinstance(acquire(flaky, [claim(store, key, pool())]), Acquired)
    assert len(pauses) == 2 and all(0 <= p <= 0.2 for p in pauses)
    hot = Table(Cancelling(table.client, "TransactionConflict", times=99), table.name, Backoff(attempts=3, sleep=pauses.append))
    with pytest.raises(Contended):
        acquire(hot, [claim(store, scheduled(store, "u"), pool())])
    assert store.get_ti(TIKey("d", "r", "u")).state == S.SCHEDULED


def test_a_cancellation_that_is_no_lost_race_is_raised(store, table):
    broken = Table(Cancelling(table.client, "ValidationError", times=1), table.name)
    with pytest.raises(ClientError, match="TransactionCanceledException"):
        acquire(broken, [claim(store, scheduled(store, "t"), pool())])


def test_acquire_refuses_what_cannot_be_one_claim(store, table):
    key = scheduled(store, "t")
    with pytest.raises(ValueError, match="no claims"):
        acquire(table, [])
    with pytest.raises(ValueError, match="once"):
        acquire(table, [claim(store, key, pool(), pool())])
    with pytest.raises(ValueError, match="two sizes"):
        acquire(table, [claim(store, key, pool(size=3)), claim(store, scheduled(store, "u"), pool(size=4))])
    with pytest.raises(ValueError, match="1 to 100 items"):
        acquire(table, [claim(store, key, *(Need(f"l{i}", 1, 5) for i in range(100)))])


# ------------------------------------------------------------------------------------------------------ release
def test_a_release_ends_the_instance_and_gives_back_in_one_transaction_once(store, table):
    key = scheduled(store, "t")
    (ticket,) = acquire(table, [claim(store, key, pool(3), Need("parallelism", 1, 32))]).tickets
    assert release(table, end(store, key), ticket)
    ti = store.get_ti(key)
    assert ti.state == S.SUCCESS and ti.ticket is None
    assert shards_of(table) == [(10, 10)] and shards_of(table, "parallelism") == [(32, 32)]
    assert not release(table, end(store, key), ticket)  # a repeat: nothing held, nothing given
    assert shards_of(table) == [(10, 10)]
    check_accounts(table)


def test_a_release_outlasts_conflicts_a_claim_gives_up_on(store, table, pauses):
    """An end must land: conflicts that make a claim give up (``Contended``, a later pass tries again) are
    waited out by a release, with longer pauses; only a shard conflicting past its attempts raises."""
    key = scheduled(store, "t")
    (ticket,) = acquire(table, [claim(store, key, pool(3))]).tickets
    backoff = Backoff(attempts=3, sleep=pauses.append)
    hot = Table(Cancelling(table.client, "TransactionConflict", times=10), table.name, backoff)
    with pytest.raises(Contended):
        acquire(hot, [claim(store, scheduled(store, "u"), pool())])
    pauses.clear()
    hot = Table(Cancelling(table.client, "TransactionConflict", times=10), table.name, backoff)
    assert release(hot, end(store, key), ticket)
    assert store.get_ti(key).state == S.SUCCESS and shards_of(table) == [(10, 10)]
    assert len(pauses) == 10 and max(pauses) <= RELEASE_CAP_S
    endless = Table(Cancelling(table.client, "TransactionConflict", times=RELEASE_ATTEMPTS), table.name, backoff)
    other = scheduled(store, "v")
    (held,) = acquire(table, [claim(store, other, pool(2))]).tickets
    with pytest.raises(Contended):
        release(endless, end(store, other), held)
    assert store.get_ti(other).ticket == held.encode()  # nothing written: its next delivery releases it
    check_accounts(table)


def test_a_partial_release_repeated_gives_nothing_twice(store, table):
    key = scheduled(store, "t")
    (ticket,) = acquire(table, [claim(store, key, pool(), Need("run", 1, 4))]).tickets
    assert release(table, end(store, key, S.DEFERRED), ticket, keep={POOL})
    store.transition_ti(key, expected=[S.DEFERRED], state=S.RUNNING)
    assert not release(table, end(store, key, S.DEFERRED), ticket, keep={POOL})
    assert check_accounts(table) == {keys.limit_pk(POOL): 1, keys.limit_pk("run"): 0}


def test_a_release_whose_own_condition_fails_gives_nothing(store, table):
    key = scheduled(store, "t")
    (ticket,) = acquire(table, [claim(store, key, pool())]).tickets
    store.transition_ti(key, expected=[S.QUEUED], state=S.SCHEDULED)  # (a state the end does not expect)
    assert not release(table, end(store, key), ticket)
    assert check_accounts(table) == {keys.limit_pk(POOL): 1}


def test_a_resent_release_is_recognised_as_its_own(store, table):
    key = scheduled(store, "t")
    (ticket,) = acquire(table, [claim(store, key, pool())]).tickets
    assert release(Table(LostAcknowledgement(table.client), table.name), end(store, key), ticket)
    assert check_accounts(table) == {keys.limit_pk(POOL): 0}


def test_a_release_of_a_limit_whose_counters_are_gone_still_lands(store, table):
    key = scheduled(store, "t")
    (ticket,) = acquire(table, [claim(store, key, pool(), Need("gone", 1, 3))]).tickets
    table.client.delete_item(TableName=table.name, Key=keys.counter_key("gone", 0))
    assert release(table, end(store, key), ticket)
    assert store.get_ti(key).ticket is None and shards_of(table) == [(10, 10)]


# ---------------------------------------------------------------------------------------------- ensure, resize
def test_ensure_creates_every_shard_once(table):
    assert ensure(table, POOL, 200)
    assert shards_of(table) == [(50, 50)] * 4
    assert counters(table)[keys.limit_pk(POOL)][0].size == 200
    assert not ensure(table, POOL, 10)
    assert shards_of(table) == [(50, 50)] * 4
    assert ensure(table, "unlimited", -1)
    assert room(table, "unlimited") == UNLIMITED and len(shards_of(table, "unlimited")) == 32
    assert room(table, "absent") is None


def test_a_growth_adds_free_slots_and_shards(store, table):
    key = scheduled(store, "t")
    acquire(table, [claim(store, key, pool(4, 10))])
    assert resize(table, POOL, 100)
    assert shards_of(table) == [(50, 46), (50, 50)]
    assert counters(table)[keys.limit_pk(POOL)][0].size == 100
    assert resize(table, POOL, 100)  # already that size
    assert not resize(table, "absent", 5)
    check_accounts(table)


def test_a_shrink_below_the_held_slots_lets_them_finish_and_takes_nothing_meanwhile(store, table):
    holders = [scheduled(store, f"t{i}") for i in range(6)]
    tickets_ = acquire(table, [claim(store, key, pool(1, 10)) for key in holders]).tickets
    assert resize(table, POOL, 3)
    assert shards_of(table) == [(3, -3)]
    assert acquire(table, [claim(store, scheduled(store, "new"), pool(1, 3))]) == Full(POOL, 0)
    for key, ticket in zip(holders[:3], tickets_[:3], strict=True):
        assert release(table, end(store, key), ticket)
    assert acquire(table, [claim(store, scheduled(store, "new2"), pool(1, 3))]) == Full(POOL, 0)
    assert release(table, end(store, holders[3]), tickets_[3])
    assert isinstance(acquire(table, [claim(store, scheduled(store, "new3"), pool(1, 3))]), Acquired)
    assert check_accounts(table) == {keys.limit_pk(POOL): 3}


def test_a_shrink_of_a_sharded_limit_cuts_free_slots_first(store, table):
    ensure(table, POOL, 128)
    (ticket,) = acquire(table, [claim(store, scheduled(store, "t"), pool(60, 128))]).tickets
    shard = ticket.holds[0].shard
    assert resize(table, POOL, 64)  # 64 free on the other shard: cut there, the held shard untouched
    assert shards_of(table)[shard] == (64, 4) and shards_of(table)[1 - shard] == (0, 0)
    assert resize(table, POOL, 30)  # 4 free left: the rest over the held shard's share
    assert shards_of(table)[shard] == (30, -30)
    check_accounts(table)


def test_a_resize_meeting_a_rebalance_reads_again(store, table):
    ensure(table, POOL, 128)
    real = table.client

    class RebalanceFirst:
        """Before the resize's transaction, a rebalance lands (once)."""

        def __init__(self) -> None:
            self.done = False

        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

        def transact_write_items(self, **kwargs: Any) -> Any:
            if not self.done:
                self.done = True
                assert rebalance(table, POOL, {0: -10, 1: 10})
            return real.transact_write_items(**kwargs)

    assert resize(Table(RebalanceFirst(), table.name), POOL, 64)
    assert sum(share for share, _ in shards_of(table)) == 64
    check_accounts(table)


def test_the_stores_own_client_serves_as_well(store, table):
    """The package takes any DynamoDB client: the one the store's pynamodb connection holds, too."""
    own = Table(store.models.task_instance._get_connection().connection.client, table.name)
    key = scheduled(store, "t")
    (ticket,) = acquire(own, [claim(store, key, pool())]).tickets
    assert room(own, POOL) == 9 and release(own, end(store, key), ticket) and room(table, POOL) == 10


# ---------------------------------------------------------------------------------------------------- doubles
class Cancelling:
    """A client whose first ``times`` transactions DynamoDB cancels for ``code`` on their first item."""

    def __init__(self, client: Any, code: str, times: int) -> None:
        self._client = client
        self.code = code
        self.left = times

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def transact_write_items(self, **kwargs: Any) -> Any:
        if self.left:
            self.left -= 1
            reasons = [{"Code": self.code}] + [{"Code": "None"}] * (len(kwargs["TransactItems"]) - 1)
            raise ClientError({"Error": {"Code": "TransactionCanceledException", "Message": "conflict"},
                               "CancellationReasons": reasons}, "TransactWriteItems")
        return self._client.transact_write_items(**kwargs)

