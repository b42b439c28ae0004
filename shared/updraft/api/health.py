"""``GET /api/v2/monitor/health``, shaped as Airflow 3's ``HealthInfoResponse``.

- ``metadatabase``: ``healthy`` when strongly consistent reads of the store succeed (the scheduler's and the
  parser's heartbeat items: one ``GetItem`` each, found or not), else ``unhealthy``; as in Airflow, the route
  itself still answers 200, so a monitor reads the body.
- ``scheduler``: the latest heartbeat the scheduler Lambda recorded (:mod:`updraft.store.heartbeats`: at most
  every 30 s per container, on every tick and task completion). ``healthy`` while it is more recent than two
  ticks and Airflow's 30 s grace (one missed tick is tolerated), ``unhealthy`` when older, as Airflow reports a
  scheduler without a recent heartbeat. Before the first heartbeat (a new environment whose first tick has not
  come), status and heartbeat are ``null``: nothing is known yet.
- ``dag_processor``: the parser's latest parse. The parser runs when a DAG file is uploaded, not in a loop, so
  an old parse is not a fault: ``healthy`` with its time once it has parsed, ``null`` (no DAG processor has
  run, as Airflow reports one that is not running) before.
- ``triggerer``: ``null`` status and heartbeat: deferrals are Step Functions executions, there is no triggerer
  process (Airflow reports a triggerer that is not running the same way).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from updraft.api.formats import iso
from updraft.store.heartbeats import DAG_PROCESSOR, SCHEDULER

if TYPE_CHECKING:
    from updraft.api.models import HealthInfoResponse
    from updraft.store.api import Store

log = logging.getLogger(__name__)

HEALTHY = "healthy"
UNHEALTHY = "unhealthy"
GRACE = dt.timedelta(seconds=30)  # Airflow's [scheduler] scheduler_health_check_threshold


def scheduler_status(last: dt.datetime | None, now: dt.datetime, tick: dt.timedelta) -> str | None:
    if last is None:
        return None
    return HEALTHY if now - last <= 2 * tick + GRACE else UNHEALTHY


def monitor_health(store: Callable[[], Store], *, now: dt.datetime, tick: Callable[[], dt.timedelta]
                   ) -> HealthInfoResponse:
    """The health document. ``store`` builds (or returns) the store; a failure to build it (configuration,
    credentials) counts against the metadatabase like a failed read, since the API cannot reach it either way,
    and leaves the components' heartbeats unknown (null). ``tick`` gives the scheduler's tick interval."""
    try:
        reader = store()
        scheduler, parser = reader.last_heartbeat(SCHEDULER), reader.last_heartbeat(DAG_PROCESSOR)
        tick_interval = tick()
    except Exception:
        log.exception("health check: the store read failed")
        return {
            "metadatabase": {"status": UNHEALTHY},
            "scheduler": {"status": None, "latest_scheduler_heartbeat": None},
            "triggerer": {"status": None, "latest_triggerer_heartbeat": None},
            "dag_processor": {"status": None, "latest_dag_processor_heartbeat": None},
        }
    return {
        "metadatabase": {"status": HEALTHY},
        "scheduler": {"status": scheduler_status(scheduler, now, tick_interval),
                      "latest_scheduler_heartbeat": iso(scheduler)},
        "triggerer": {"status": None, "latest_triggerer_heartbeat": None},
        "dag_processor": {"status": HEALTHY if parser is not None else None,
                          "latest_dag_processor_heartbeat": iso(parser)},
    }
