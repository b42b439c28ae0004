"""The tick's pool gauges (``scheduling/pass_metrics.py``): at most once per ``POOL_EVERY`` once pools were
counted, and again at the next tick when none was (a fresh environment lists no pool yet, or the read failed)."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

from updraft.scheduling import pass_metrics
from updraft.scheduling.pass_metrics import POOL_EVERY, PassMetrics
from updraft.scheduling.pass_report import PassReport
from updraft.store.api import Pool

T0 = dt.datetime(2026, 12, 2, tzinfo=dt.UTC)


class _Metrics:
    def __init__(self) -> None:
        self.pools: list[str] = []

    def scheduler_pass(self, *_: object, **__: object) -> None:
        pass

    def pool_slots(self, name: str, _: object) -> None:
        self.pools.append(name)


def test_a_tick_that_counted_no_pool_counts_again_at_the_next(monkeypatch):
    monkeypatch.setattr(pass_metrics, "pool_occupancy", lambda store, pool: {"open": pool.slots})
    listed: list[list[Pool]] = [[], [Pool("default_pool", 128)], [Pool("default_pool", 128)]]
    metrics = _Metrics()
    scheduler = SimpleNamespace(metrics=metrics, store=SimpleNamespace(list_pools=lambda: listed.pop(0)))
    now = [T0]
    ticks = PassMetrics(clock=lambda: now[0])
    ticks.tick_done(scheduler, PassReport(), dt.timedelta(0))  # no pool listed yet
    now[0] += dt.timedelta(seconds=1)
    ticks.tick_done(scheduler, PassReport(), dt.timedelta(0))
    assert metrics.pools == ["default_pool"]
    now[0] += dt.timedelta(seconds=1)
    ticks.tick_done(scheduler, PassReport(), dt.timedelta(0))  # counted a second ago: not again yet
    assert metrics.pools == ["default_pool"]
    now[0] += POOL_EVERY
    ticks.tick_done(scheduler, PassReport(), dt.timedelta(0))
    assert metrics.pools == ["default_pool", "default_pool"]
