"""``GET /api/updraft/metrics``: Airflow's metrics (``updraft.metrics``) as local mode wrote them, for the web UI.

An Updraft route, outside Airflow's ``/api/v2`` (``routing.UPDRAFT_API_PREFIX``): Airflow has no metrics route, and
its strict clients never see this one. Local mode and ``dags test`` append the functions' EMF lines to a file
(``UPDRAFT_METRICS_FILE``); this answers its data points, newest first, filtered by metric ``name``
(repeatable) and by any dimension (``dag_id``, ``task_id``, ``state``, ``pool_name``...), at most ``limit``
(default 100, at most 1000). On AWS the functions' lines become CloudWatch metrics instead (the environment's
dashboard): the answer then says so, with the namespace, and has no data points.
"""

from __future__ import annotations

from typing import Any

from updraft.api.routing import UPDRAFT_API_PREFIX, Call, RouteTable
from updraft.metrics.datapoints import read_datapoints
from updraft.metrics.names import AIRFLOW_METRICS

routes = RouteTable(prefix=UPDRAFT_API_PREFIX)

MAX_LIMIT = 1000
# The dimensions a query may filter on: Airflow's tags, and the handlers' own metrics' service.
DIMENSIONS = sorted({name for metric in AIRFLOW_METRICS for name in metric.dimensions} | {"service"})


@routes.get("/metrics")
def get_metrics(call: Call) -> dict[str, Any]:
    names = set(call.query.strings("name")) or None
    wanted = {key: value for key in DIMENSIONS if (value := call.query.string(key)) is not None}
    limit = min(call.query.integer("limit", 100, ge=1), MAX_LIMIT)
    call.query.check()
    config = call.services.config
    if not config.metrics_file:
        return {"source": "cloudwatch", "namespace": config.metrics_namespace, "datapoints": [], "total_entries": 0}
    points = read_datapoints(config.metrics_file, names=names, dimensions=wanted)
    return {"source": "file", "namespace": config.metrics_namespace,
            "datapoints": [point.to_dict() for point in points[:limit]], "total_entries": len(points)}
