"""The capacity benchmark's sizes: a scenario run below its full size at two sizes is extrapolated, at one size
(``--scale`` below 1 on a one-size scenario) it is given as measured (bench/capacity_bench.py)."""

from __future__ import annotations

from bench import capacity_bench as bench


def _measured(monkeypatch):
    ran: list[int] = []
    monkeypatch.setattr(bench, "run", lambda scenario, recorder: ran.append(scenario) or f"figures at {scenario}")
    monkeypatch.setattr(bench, "extrapolate", lambda small, large, n_small, n_large, n, label:
                        f"{label}: {n_small}, {n_large} -> {n}")
    return ran


def test_one_size_below_full_is_given_as_measured(monkeypatch):
    ran = _measured(monkeypatch)
    sized = bench.Sized("4 runs", lambda n: n, 250, (50,))
    assert sized.figures(None) == ["figures at 50"]
    assert ran == [50]


def test_two_sizes_below_full_are_extrapolated_to_it(monkeypatch):
    _measured(monkeypatch)
    sized = bench.Sized("fan-out", lambda n: n, 1000, (20, 200))
    assert sized.figures(None) == ["figures at 20", "figures at 200", "fan-out (extrapolated): 20, 200 -> 1000"]
