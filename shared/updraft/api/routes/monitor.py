"""``GET /api/v2/monitor/health`` (no auth in Airflow either)."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from updraft.api.health import monitor_health
from updraft.api.routing import Call, RouteTable

if TYPE_CHECKING:
    from updraft.api.models import HealthInfoResponse

routes = RouteTable()


@routes.get("/monitor/health")
def get_health(call: Call) -> HealthInfoResponse:
    return monitor_health(lambda: call.store, now=call.now(),
                          tick=lambda: dt.timedelta(seconds=call.services.config.tick_seconds))
