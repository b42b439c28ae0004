"""The latency benchmark's fan-out timeline: times from the root's end to the last middle started, to the last
middle ended and to the run's end, read from the store's timestamps (bench/latency_bench.py)."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import pytest

from bench import latency_bench as bench

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def _ti(task_id: str, start: float | None, end: float | None) -> SimpleNamespace:
    def at(seconds: float | None) -> dt.datetime | None:
        return None if seconds is None else T0 + dt.timedelta(seconds=seconds)
    return SimpleNamespace(key=SimpleNamespace(task_id=task_id), start_date=at(start), end_date=at(end))


def _result(tis: list[SimpleNamespace], run_end: float | None) -> dict:
    return {"state": "success", "wall_s": 9.0, "tis": tis,
            "run_end": None if run_end is None else T0 + dt.timedelta(seconds=run_end)}


def test_times_count_from_the_roots_end_to_the_last_middle_and_the_runs_end():
    tis = [_ti("first", 0.0, 1.0), _ti("m000", 1.2, 2.0), _ti("m001", 1.5, 4.0), _ti("m002", 2.5, 3.0),
           _ti("last", 4.1, 4.2)]
    timeline = bench.fanout_timeline(_result(tis, 4.5))
    assert timeline["root_end_to_last_middle_started_s"] == pytest.approx(1.5)
    assert timeline["root_end_to_last_middle_ended_s"] == pytest.approx(3.0)
    assert timeline["root_end_to_run_end_s"] == pytest.approx(3.5)
    assert "tis" not in timeline and "run_end" not in timeline
    assert timeline["wall_s"] == 9.0


def test_a_middle_that_never_ran_leaves_its_times_unknown_and_the_median_says_so():
    tis = [_ti("first", 0.0, 1.0), _ti("m000", 1.2, 2.0), _ti("m001", None, None), _ti("last", None, None)]
    timeline = bench.fanout_timeline(_result(tis, None))
    assert timeline["root_end_to_last_middle_started_s"] is None
    assert timeline["root_end_to_last_middle_ended_s"] is None
    assert timeline["root_end_to_run_end_s"] is None
    done = {**timeline, "root_end_to_run_end_s": 2.0}
    medians = bench._median_of([timeline, done, done], ("wall_s", "root_end_to_run_end_s"))
    assert medians == {"wall_s": 9.0, "root_end_to_run_end_s": None, "states": ["success"] * 3}


def test_the_chain_plays_the_worker_lambda_in_warm_environments():
    """Each invoke runs as the worker Lambda does (its mini scheduler decides the next task from its upstream's
    item, no Query of the whole run per try), in an idle warm environment when there is one (its Scheduler and
    what it remembers kept), as Lambda reuses them: a chain needs about two, the one ending and the one starting
    (a third when the next event comes before both returned, on a loaded machine), never one per try."""
    from moto import mock_aws

    from updraft.local.concurrent_moto import ConcurrentMoto

    with mock_aws(), ConcurrentMoto(None).in_process() as guard:
        result = bench.run_dag(bench._chain_dag(), None, guard, 32)
    assert result["state"] == "success" and result["tasks"] == 20
    assert result["environments"] <= 5
    assert result["by_operation"].get("Query", 0) <= 3  # the run's start and end, not one per hop
