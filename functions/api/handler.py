"""API Lambda: API Gateway's REST proxy (IAM-authorized) routed by Powertools to ``updraft.api``.

Only this function imports ``APIGatewayRestResolver`` (~100 ms of cold start): the routes' work lives in
``updraft.api`` and the store is built on first use by the process's shared ``Services``. Settings come from
``UPDRAFT_TABLE`` (and ``AWS_REGION``, set by Lambda) through ``updraft.config.UpdraftConfig``. No Tracer (the
X-Ray SDK costs ~300 ms of cold start).
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.event_handler import APIGatewayRestResolver
from aws_lambda_powertools.logging import correlation_paths

from updraft.api.health import monitor_health
from updraft.services import shared_services as services

logger = Logger(service="updraft-api")
app = APIGatewayRestResolver()


@app.get("/api/v2/monitor/health")
def health() -> dict[str, Any]:
    return monitor_health(lambda: services().store)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return app.resolve(event, context)
