"""Claim order: priority_weight desc, then the run's logical date, then map_index (Airflow's query order)."""

from __future__ import annotations

import datetime as dt

from helpers import START, make_run, make_ti

from updraft.model.states import TaskInstanceState as S
from updraft.scheduling.decisions.ordering import claim_order
from updraft.scheduling.waiting_claims import hand_over_order, hand_over_window


def test_priority_then_logical_date_then_map_index():
    old = make_run(run_id="old", logical_date=START)
    new = make_run(run_id="new", logical_date=START + dt.timedelta(days=1))
    undated = make_run(run_id="undated", logical_date=None)
    tis = [
        make_ti(new, "low", S.SCHEDULED, priority_weight=1),
        make_ti(new, "high", S.SCHEDULED, priority_weight=5),
        make_ti(undated, "high", S.SCHEDULED, priority_weight=5),
        make_ti(old, "high", S.SCHEDULED, priority_weight=5),
        make_ti(old, "m", S.SCHEDULED, 2, priority_weight=3),
        make_ti(old, "m", S.SCHEDULED, 0, priority_weight=3),
        make_ti(new, "m", S.SCHEDULED, 1, priority_weight=3),
    ]
    ordered = claim_order(tis, [old, new, undated])
    assert [(t.run_id, t.task_id, t.map_index) for t in ordered] == [
        ("old", "high", -1), ("new", "high", -1), ("undated", "high", -1),
        ("old", "m", 0), ("old", "m", 2), ("new", "m", 1),
        ("new", "low", -1),
    ]


def test_order_is_deterministic_for_equal_keys():
    run = make_run()
    tis = [make_ti(run, t, S.SCHEDULED) for t in "cab"]
    assert [t.task_id for t in claim_order(tis, [run])] == ["a", "b", "c"]


def test_a_wave_of_ends_reads_and_hands_over_to_different_ties_and_airflows_order_holds_otherwise():
    """Tries that end together were claimed together, at neighbouring places: each reads the first hit and three
    from its own place on, and tries its own first among those Airflow's order cannot tell apart (a fan-out's
    tasks); a higher priority or a mapped task's lower map index keeps its place ahead."""
    run = make_run()
    fan = claim_order([make_ti(run, f"t{i:02d}", S.SCHEDULED) for i in range(32)], [run])
    hits = [ti.key for ti in fan]
    windows = [hand_over_window(hits, place) for place in range(100, 132)]
    assert all(hits[0] in window and len(set(window)) == len(window) in (3, 4) for window in windows)
    assert len({window[0] for window in windows}) == 32  # a wave of 32 starts at 32 different hits
    assert hand_over_window(hits[:2], 7) == [hits[1], hits[0]]  # (fewer hits than picks: each once)
    read = {ti.key: ti for ti in fan}
    window = hand_over_window(hits, 110)
    tried = hand_over_order(claim_order([read[key] for key in window], [run]), window)
    assert [ti.key for ti in tried] == window == [*hits[14:17], hits[0]]  # its own picks, then the first hit
    mapped = claim_order([make_ti(run, "m", S.SCHEDULED, i) for i in range(3)]
                         + [make_ti(run, "high", S.SCHEDULED, priority_weight=9)], [run])
    keys = [ti.key for ti in mapped]
    for place in range(8):
        window = hand_over_window(keys, place)
        ordered = claim_order([ti for ti in mapped if ti.key in window], [run])
        assert hand_over_order(ordered, window) == ordered  # nothing ties: claim order
