"""API Lambda: API Gateway's REST proxy (IAM-authorized) routed by Powertools to ``updraft.api``.

Metrics (EMF, ``service=updraft-api``): ``ApiRequests`` and ``Api5xx`` per invocation. Only this function imports
``APIGatewayRestResolver`` (~100 ms of cold start): the routes' work lives in
``updraft.api`` and the store is built on first use by the process's shared ``Services``. Settings come from
``UPDRAFT_TABLE`` (and ``AWS_REGION``, set by Lambda) through ``updraft.config.UpdraftConfig``. No Tracer (the
X-Ray SDK costs ~300 ms of cold start).
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.event_handler import APIGatewayRestResolver
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics import MetricUnit

from updraft.api.health import monitor_health
from updraft.config import UpdraftConfig
from updraft.services import shared_services as services

logger = Logger(service="updraft-api")
metrics = Metrics(namespace=UpdraftConfig.from_env().metrics_namespace, service="updraft-api")
app = APIGatewayRestResolver()


@app.get("/api/v2/monitor/health")
def health() -> dict[str, Any]:
    return monitor_health(lambda: services().store)


@metrics.log_metrics
@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    response = app.resolve(event, context)
    # Client errors and server errors apart: a 5xx is the API's fault and where an alarm belongs.
    status = int(response.get("statusCode", 200))
    metrics.add_metric(name="ApiRequests", unit=MetricUnit.Count, value=1)
    metrics.add_metric(name="Api5xx", unit=MetricUnit.Count, value=1 if status >= 500 else 0)
    return response
