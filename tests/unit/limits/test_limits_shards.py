"""The shard arithmetic, exhaustively over small limits (and by property over large ones)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from updraft.limits.shards import (
    MAX_SHARDS,
    SLOTS_PER_SHARD,
    UNLIMITED,
    counted_size,
    first_shard,
    pick_shard,
    rebalance_plan,
    resize_plan,
    room,
    shard_count,
    split,
)


def test_a_limit_takes_a_shard_per_64_slots_up_to_32():
    assert [shard_count(size) for size in (-1, 0, 1, 64, 65, 128, 129, 2048, 2049, 10**6)] == \
        [32, 1, 1, 1, 2, 2, 3, 32, 32, 32]
    assert all(shard_count(size) == max(1, -(-size // SLOTS_PER_SHARD)) for size in range(0, 2049))
    assert counted_size(-1) == UNLIMITED and counted_size(7) == 7


def test_a_size_splits_evenly_the_remainder_first():
    for size, shards in itertools.product(range(0, 200), range(1, MAX_SHARDS + 1)):
        shares = split(size, shards)
        assert len(shares) == shards and sum(shares) == size
        assert shares == sorted(shares, reverse=True) and shares[0] - shares[-1] <= 1
    with pytest.raises(ValueError):
        split(-1, 2)
    with pytest.raises(ValueError):
        split(5, 0)


def test_the_first_shard_is_stable_and_spread():
    assert first_shard(8, "a") == first_shard(8, "a")
    hits = {first_shard(8, f"ticket-{i}") for i in range(200)}
    assert hits == set(range(8))
    assert first_shard(1, "x") == 0


FREES = [list(frees) for n in (1, 2, 3) for frees in itertools.product(range(-3, 6), repeat=n)]


@pytest.mark.parametrize("slots", [1, 2, 4, 7, 12])
def test_a_take_goes_to_the_richest_shard_that_has_it_else_rebalances_else_is_full(slots):
    for frees in FREES:
        assert room(frees) == sum(f for f in frees if f > 0)
        shard = pick_shard(frees, slots)
        plan = rebalance_plan(frees, slots)
        if shard is not None:
            assert frees[shard] == max(frees) >= slots and plan is None
            continue
        if room(frees) < slots:
            assert plan is None
            continue
        assert plan is not None and sum(plan.values()) == 0
        after = [free + plan.get(index, 0) for index, free in enumerate(frees)]
        target = max(plan, key=lambda index: plan[index])
        assert after[target] >= slots
        # donors give only free slots, and only what the target lacks
        assert all(0 <= after[i] <= frees[i] for i, d in plan.items() if d < 0)
        assert plan[target] == slots - max(0, frees[target]) or frees[target] < 0


SHARES = [(shares, frees) for n in (1, 2, 3) for shares in itertools.product(range(0, 5), repeat=n)
          for frees in itertools.product(range(-2, 5), repeat=n) if all(f <= s for f, s in zip(frees, shares, strict=True))]


@pytest.mark.parametrize("size", [0, 1, 3, 6, 10, 70, 200])
def test_a_resize_moves_shares_to_the_new_size_and_goes_over_only_when_the_limit_does(size):
    for shares, frees in SHARES:
        deltas = resize_plan(shares, frees, size)
        count = max(len(shares), shard_count(size))
        assert len(deltas) == count and sum(shares) + sum(deltas) == size
        new_shares = [s + d for s, d in zip([*shares, *[0] * count], deltas, strict=False)]
        new_frees = [f + d for f, d in zip([*frees, *[0] * count], deltas, strict=False)]
        assert all(share >= 0 for share in new_shares)
        held = sum(shares) - sum(frees)
        assert room(new_frees) == max(0, size - held)  # room only under the size, and all of it
        if size >= held:  # under its size, no shard is over its share
            assert min(new_frees) >= 0
        if size >= sum(shares) and min(frees) >= 0:  # a growth with nobody over: no shard loses anything
            assert all(d >= 0 for d in deltas)


@given(st.lists(st.integers(0, 10**6), min_size=1, max_size=32), st.integers(-1, 10**7))
def test_a_resize_of_any_limit_lands_on_its_size(shares, size):
    deltas = resize_plan(shares, shares, size)  # nothing held
    assert sum(shares) + sum(deltas) == counted_size(size)
    assert all(s + d >= 0 for s, d in zip([*shares, *[0] * len(deltas)], deltas, strict=False))
