"""The order an end in a waiting run tries the index's hits in (``waiting_claims.pick_order``): ends that look at
once start at different hits of the best priority, never below it, and one at a time takes Airflow's order."""

from __future__ import annotations

from updraft.model.records import TIKey
from updraft.scheduling.waiting_claims import pick_order
from updraft.store.api import WaitingHit


def _hits(*weights: int) -> list[WaitingHit]:
    """Hits in claim order: by weight descending, then map index."""
    return [WaitingHit(TIKey("d", "r", "t", i), w) for i, w in enumerate(weights)]


def _indexes(keys: list[TIKey]) -> list[int]:
    return [key.map_index for key in keys]


def test_a_spread_of_one_is_claim_order():
    hits = _hits(5, 5, 5, 1)
    assert [_indexes(pick_order(hits, place, 1)) for place in range(4)] == [[0, 1, 2, 3]] * 4


def test_ends_at_consecutive_places_start_at_different_hits():
    hits = _hits(*[5] * 12)
    firsts = [pick_order(hits, place, 8)[0] for place in range(8)]
    assert _indexes(firsts) == list(range(8))  # the next eight in claim order, one each
    assert _indexes(pick_order(hits, 3, 8)) == [3, 4, 5, 6, 7, 0, 1, 2, 8, 9, 10, 11]  # the rest, in order


def test_places_wrap_within_the_spread():
    assert _indexes(pick_order(_hits(*[5] * 6), 9, 4)[:4]) == [1, 2, 3, 0]


def test_a_lower_priority_never_goes_before_a_higher_one():
    hits = _hits(9, 9, 5, 5, 5)
    for place in range(6):
        order = pick_order(hits, place, 8)
        assert sorted(_indexes(order[:2])) == [0, 1] and _indexes(order[2:]) == [2, 3, 4]


def test_nothing_found_is_nothing_to_try():
    assert pick_order([], 3, 8) == []
