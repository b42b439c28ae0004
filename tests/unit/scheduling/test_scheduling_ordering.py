"""Claim order: priority_weight desc, then the run's logical date, then map_index (Airflow's query order)."""

from __future__ import annotations

import datetime as dt

from helpers import START, make_run, make_ti

from updraft.model.states import TaskInstanceState as S
from updraft.scheduling.decisions.ordering import claim_order
from updraft.scheduling.waiting_claims import hand_over_order


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


def test_ends_hand_over_to_different_ties_and_keep_airflows_order_otherwise():
    """Tries ending together start their hand-overs at different instances among those Airflow's order cannot
    tell apart (a fan-out's tasks), so they do not all meet on the first; a mapped task's instances and a higher
    priority keep their place."""
    run = make_run()
    fan = claim_order([make_ti(run, f"t{i}", S.SCHEDULED) for i in range(4)], [run])
    starts = {hand_over_order(make_ti(run, f"done{i}", S.RUNNING), fan)[0].task_id for i in range(12)}
    assert len(starts) > 1
    for i in range(12):  # every instance still tried once, the rotation a rotation of the ties
        order = [t.task_id for t in hand_over_order(make_ti(run, f"done{i}", S.RUNNING), fan)]
        assert sorted(order) == ["t0", "t1", "t2", "t3"] and "".join(order) in "t0t1t2t3t0t1t2t3"
    mapped = claim_order([make_ti(run, "m", S.SCHEDULED, i) for i in range(3)]
                         + [make_ti(run, "high", S.SCHEDULED, priority_weight=9)], [run])
    for i in range(12):
        assert [(t.task_id, t.map_index) for t in hand_over_order(make_ti(run, f"done{i}", S.RUNNING), mapped)] \
            == [("high", -1), ("m", 0), ("m", 1), ("m", 2)]
