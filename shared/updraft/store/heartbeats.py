"""Component heartbeats: one item per component (``scheduler``, ``dag_processor``) with the latest time it ran,
read by ``GET /monitor/health``.

Each component's runs are Lambda invocations (a scheduler tick, a parse), so a heartbeat is "this component
completed a pass at ``at``". Writing one per invocation would cost a write per task completion; instead each
process writes at most once per ``every`` (it remembers its own last write), and the write's condition keeps the
stored time from moving backwards when processes race (a failed condition costs the write, never a wrong value).
"""

from __future__ import annotations

import datetime as dt
import functools

from updraft.store.base import StoreBase
from updraft.store.keys import HEARTBEAT_SK, heartbeat_pk
from updraft.store.writes import any_of, conditional

SCHEDULER = "scheduler"
DAG_PROCESSOR = "dag_processor"  # the parser, named as Airflow's health check names its DAG processor
# Each process records a component's heartbeat at most this often: ~2 writes a minute per warm container.
HEARTBEAT_EVERY = dt.timedelta(seconds=30)


class HeartbeatStore(StoreBase):
    @functools.cached_property
    def _beaten(self) -> dict[str, dt.datetime]:
        """component -> when this process last recorded it."""
        return {}

    def heartbeat_component(self, component: str, now: dt.datetime, *, every: dt.timedelta) -> bool:
        """Record that ``component`` ran at ``now``, unless this process recorded it less than ``every`` ago.
        True when a write was sent and applied."""
        last = self._beaten.get(component)
        if last is not None and now - last < every:
            return False
        self._beaten[component] = now
        H = self.models.heartbeat
        item = H(heartbeat_pk(component), HEARTBEAT_SK, component=component, at=now)
        return conditional(lambda: item.save(condition=any_of(H.at.does_not_exist(), H.at < now)))

    def last_heartbeat(self, component: str) -> dt.datetime | None:
        H = self.models.heartbeat
        try:
            return H.get(heartbeat_pk(component), HEARTBEAT_SK, consistent_read=True).at
        except H.DoesNotExist:
            return None
