"""Airflow's metrics of the scheduler function's tick: its heartbeat, its pass's duration, the running runs, the
tries it made executable or left starving, and every pool's slots.

The pool gauges cost a read per pool and per holding try (``pool_occupancy``), so a container emits them at
most once per ``POOL_EVERY`` (the tick's own period on AWS); local mode's faster ticks do not multiply them.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable

from updraft.scheduling.decisions.blocked import BlockKind
from updraft.scheduling.pass_report import PassReport
from updraft.scheduling.pool_occupancy import pool_occupancy
from updraft.scheduling.scheduler import Scheduler

log = logging.getLogger(__name__)

POOL_EVERY = dt.timedelta(seconds=60)


class PassMetrics:
    """Emits a tick's metrics through ``scheduler.metrics``; keeps when the pools were last counted."""

    def __init__(self, clock: Callable[[], dt.datetime]) -> None:
        self.clock = clock
        self._pools_at: dt.datetime | None = None

    def tick_done(self, scheduler: Scheduler, report: PassReport, span: dt.timedelta) -> None:
        starving = sum(reason.kind == BlockKind.POOL_FULL for reason in report.not_claimed.values())
        scheduler.metrics.scheduler_pass(span, running_runs=report.runs_running or 0,
                                         executable=len(report.dispatched), starving=starving)
        now = self.clock()
        if self._pools_at is not None and now - self._pools_at < POOL_EVERY:
            return
        try:
            pools = scheduler.store.list_pools()
            for pool in pools:
                scheduler.metrics.pool_slots(pool.name, pool_occupancy(scheduler.store, pool))
        except Exception:  # metrics are best effort: the tick's scheduling is done and stays done
            log.warning("pool metrics skipped this tick", exc_info=True)
            return
        if pools:  # a tick that counted none (a fresh environment lists no pool yet) counts again at the next
            self._pools_at = now
