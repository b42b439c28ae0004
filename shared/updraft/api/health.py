"""``GET /api/v2/monitor/health``, shaped as Airflow 3's ``HealthInfoResponse``.

What Updraft can honestly report:

- ``metadatabase``: ``healthy`` when a strongly consistent read of the store succeeds (the ``default_pool``
  limit item: one ``GetItem``, found or not), else ``unhealthy``; as in Airflow, the route itself still answers
  200, so a monitor reads the body.
- ``scheduler``: ``null`` status and heartbeat. Airflow's scheduler is a long-running job that heartbeats, and
  Airflow says ``unhealthy`` when there is none. Updraft's scheduler is a Lambda invoked per tick and per
  finished task, with no heartbeat record to read, so neither ``healthy`` nor ``unhealthy`` would be true; the
  schema allows ``null`` (Airflow reports its triggerer the same way when none runs).
- ``triggerer`` and ``dag_processor``: ``null`` for the same reason (deferrals are Step Functions executions,
  parsing is the S3-triggered parser Lambda).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from updraft.model.limits import DEFAULT_POOL, pool_limit

if TYPE_CHECKING:
    from updraft.store.api import Store

log = logging.getLogger(__name__)

HEALTHY = "healthy"
UNHEALTHY = "unhealthy"


def monitor_health(store: Callable[[], Store]) -> dict[str, Any]:
    """The health document. ``store`` builds (or returns) the store; a failure to build it (configuration,
    credentials) counts against the metadatabase like a failed read, since the API cannot reach it either way."""
    try:
        store().get_limit(pool_limit(DEFAULT_POOL))
        metadatabase = HEALTHY
    except Exception:
        log.exception("health check: the store read failed")
        metadatabase = UNHEALTHY
    return {
        "metadatabase": {"status": metadatabase},
        "scheduler": {"status": None, "latest_scheduler_heartbeat": None},
        "triggerer": {"status": None, "latest_triggerer_heartbeat": None},
        "dag_processor": {"status": None, "latest_dag_processor_heartbeat": None},
    }
