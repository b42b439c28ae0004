"""Random sequences of acquires, releases, resizes and rebalances over several limits and shards: after every
step each shard's ``free`` is its share minus what the tickets hold on it and the shares sum to the size
(invariant 1); a limit no shrink pushed below its held slots is never over its size; an acquire lands exactly
when every limit it needs has the room."""

from __future__ import annotations

import itertools
import uuid

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule, run_state_machine_as_test
from limits_helpers import S, check_accounts, claim, end, scheduled
from moto import mock_aws

from tests.mocked_clients import mocked_client
from updraft.limits import Acquired, Backoff, Full, Lost, Need, Table, Ticket, acquire, rebalance, release, resize
from updraft.limits import room as limit_room
from updraft.limits.counters import read
from updraft.model.records import TIKey
from updraft.store.config import StoreConfig
from updraft.store.dynamo import DynamoStore
from updraft.store.tables import create_table

LIMITS = {"pool:small": 5, "pool:wide": 150, "parallelism": 200}
SIZES = [0, 2, 5, 10, 70, 130, 260]


class Limits(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        config = StoreConfig(table_name=f"limits-{uuid.uuid4().hex[:8]}", region="us-east-1", s3_bucket="b")
        create_table(config, client=mocked_client("dynamodb"))
        self.store = DynamoStore(config, s3_client=mocked_client("s3"))
        self.table = Table(mocked_client("dynamodb"), config.table_name, Backoff(sleep=lambda _: None))
        self.sizes = dict(LIMITS)  # what each acquire says a limit's size is (creation only)
        self.holding: dict[TIKey, Ticket] = {}
        self.over: set[str] = set()  # limits a shrink left below their held slots
        self.names = (f"t{i}" for i in itertools.count())

    def room(self, limit_id: str) -> int:
        found = limit_room(self.table, limit_id)
        return self.sizes[limit_id] if found is None else found

    @rule(wanted=st.lists(st.tuples(st.sampled_from(sorted(LIMITS)), st.integers(1, 3)), min_size=1, max_size=3,
                          unique_by=lambda need: need[0]),
          k=st.integers(1, 4))
    def acquire(self, wanted, k):
        totals = {limit_id: slots * k for limit_id, slots in wanted}
        fits = all(total <= self.room(limit_id) for limit_id, total in totals.items())
        holders = [scheduled(self.store, next(self.names)) for _ in range(k)]
        needs = tuple(Need(limit_id, slots, self.sizes[limit_id]) for limit_id, slots in wanted)
        result = acquire(self.table, [claim(self.store, key, *needs) for key in holders])
        if isinstance(result, Acquired):
            assert fits
            self.holding.update(zip(holders, result.tickets, strict=True))
            for limit_id in totals:  # every shard taken from is within its share
                limit = read(self.table, limit_id)
                assert limit is not None and all(limit.frees[h.shard] >= 0 for t in result.tickets for h in t.holds
                                                 if h.limit_id == limit_id)
        else:
            assert isinstance(result, Full) and not fits
            assert result.room == self.room(result.limit_id) < totals[result.limit_id]

    @precondition(lambda self: self.holding)
    @rule(data=st.data(), deferred=st.booleans())
    def release(self, data, deferred):
        key = data.draw(st.sampled_from(sorted(self.holding)))
        ticket = self.holding.pop(key)
        keep = {data.draw(st.sampled_from(ticket.limit_ids))} if deferred else set()
        assert release(self.table, end(self.store, key, S.DEFERRED if deferred else S.SUCCESS), ticket, keep=keep)
        assert not release(self.table, end(self.store, key), ticket)  # a repeat gives nothing
        if keep:  # the kept slot is released when the deferred try ends
            self.store.transition_ti(key, expected=[S.DEFERRED], state=S.RUNNING)
            self.holding[key] = Ticket.decode(self.store.get_ti(key).ticket)

    @precondition(lambda self: self.holding)
    @rule(data=st.data())
    def lose(self, data):
        """A claim of an instance another claimed: nothing taken."""
        key = data.draw(st.sampled_from(sorted(self.holding)))
        assert acquire(self.table, [claim(self.store, key, Need("pool:small", 1, 5))]) == Lost((0,))

    @rule(limit_id=st.sampled_from(sorted(LIMITS)), size=st.sampled_from(SIZES))
    def resize(self, limit_id, size):
        before = read(self.table, limit_id)
        if not resize(self.table, limit_id, size):
            assert before is None
            self.sizes[limit_id] = size  # (the next acquire creates it so)
            return
        held = size - sum(read(self.table, limit_id).frees)
        if held > size:
            self.over.add(limit_id)
        if before.size != size:  # a resize leaves room only under the size, and all of it
            assert self.room(limit_id) == max(0, size - held)

    @rule(limit_id=st.sampled_from(sorted(LIMITS)), data=st.data())
    def rebalance(self, limit_id, data):
        limit = read(self.table, limit_id)
        if limit is None or len(limit.frees) < 2:
            return
        # Drawn from fixed ranges: which shard an acquire took from is random, so the same draws meet other
        # shards' frees from one example to the next (bounds read from them make hypothesis call the strategy flaky).
        shards = len(limit.frees)
        first, step, share = data.draw(st.tuples(st.integers(0, 63), st.integers(0, 63), st.integers(0, 100)))
        source = first % shards
        target = (source + 1 + step % (shards - 1)) % shards
        moved = max(1, -(-share * (limit.frees[source] + 1) // 100))  # 1 .. one more than the source has
        assert rebalance(self.table, limit_id, {source: -moved, target: moved}) == (moved <= limit.frees[source])

    @invariant()
    def accounted(self):
        check_accounts(self.table, within=set(LIMITS) - self.over)


@pytest.mark.slow
def test_random_sequences_keep_every_limit_accounted():
    with mock_aws():
        run_state_machine_as_test(Limits, settings=settings(
            # (no shrinking: each step is several moto transactions, and a failure's 20 steps read well as they are)
            max_examples=12, stateful_step_count=20, deadline=None, phases=[Phase.generate],
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]))
