"""Eight schedulers claiming and releasing over a pool of 10 at once, through serialized moto (one request at
a time, as local mode runs it, and a transaction atomic): never more than 10 held, and every ticket's slots in
the counters, seen by a monitor whose every scan is one atomic snapshot."""

from __future__ import annotations

import random

import pytest
from limits_helpers import S, check_accounts, claim, end, race, scheduled

from updraft.limits import Acquired, Full, Lost, Need, acquire, release
from updraft.store import keys

POOL = "pool:ten"
SCHEDULERS = 8
ROUNDS = 12


@pytest.mark.slow
def test_eight_schedulers_never_hold_more_than_the_pool(store, table):
    needs = (Need(POOL, 1, 10), Need("parallelism", 1, 130))  # (parallelism: three shards, never the binding one)
    instances = [scheduled(store, f"t{i}") for i in range(SCHEDULERS * ROUNDS)]
    outcomes: list[object] = []

    def scheduler(seed: int) -> None:
        rng = random.Random(seed)
        mine = []
        for _ in range(ROUNDS):
            # claims overlap: two schedulers often want the same instance
            batch = rng.sample(instances, rng.randint(1, 3))
            result = acquire(table, [claim(store, key, *needs) for key in batch])
            outcomes.append(result)
            if isinstance(result, Acquired):
                mine.extend(zip(batch, result.tickets, strict=True))
            if mine and rng.random() < 0.6:
                key, ticket = mine.pop(rng.randrange(len(mine)))
                assert release(table, end(store, key), ticket)
                assert not release(table, end(store, key), ticket)

    peaks = race(table, SCHEDULERS, scheduler, POOL)
    assert len(peaks) > 10 and max(peaks) <= 10
    held = check_accounts(table)[keys.limit_pk(POOL)]
    assert held == sum(store.get_ti(key).state == S.QUEUED for key in instances) <= 10
    assert {type(outcome) for outcome in outcomes} == {Acquired, Full, Lost}
