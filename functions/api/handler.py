"""API Lambda: API Gateway's REST proxy (IAM-authorized) routed by Powertools to Airflow 3's REST routes.

Metrics (EMF, ``service=updraft-api``): ``ApiRequests`` and ``Api5xx`` per invocation. The resolver and the
routes (``updraft.api.app``, Powertools' ``APIGatewayRestResolver`` ~100 ms) are imported on the first request,
not at cold import, and the store is built on first use by the process's shared ``Services``. Settings come
from ``UPDRAFT_TABLE`` (and ``AWS_REGION``, set by Lambda) through ``updraft.config.UpdraftConfig``. No Tracer
(the X-Ray SDK costs ~300 ms of cold start).
"""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics import MetricUnit

from updraft.config import UpdraftConfig
from updraft.process_guard import make_undumpable
from updraft.services import shared_services as services

make_undumpable()  # before this process holds a client or runs user code: see updraft.process_guard

logger = Logger(service="updraft-api")
metrics = Metrics(namespace=UpdraftConfig.from_env().metrics_namespace, service="updraft-api")
_app: Any = None


def app() -> Any:
    """The resolver, built once per container on the first request."""
    global _app
    if _app is None:
        from updraft.api.app import build_app

        _app = build_app(services)
    return _app


def _resolve(event: dict[str, Any], context: Any) -> dict[str, Any]:
    try:
        return app().resolve(event, context)
    except Exception:  # an event the resolver cannot read: still an answer, never a crashed invocation
        logger.exception("the API request could not be resolved")
        return {"statusCode": 500, "multiValueHeaders": {"Content-Type": ["application/json"]},
                "body": json.dumps({"detail": "Internal Server Error"}), "isBase64Encoded": False}


@metrics.log_metrics
@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    response = _resolve(event, context)
    # Client errors and server errors apart: a 5xx is the API's fault and where an alarm belongs.
    status = int(response.get("statusCode", 200))
    metrics.add_metric(name="ApiRequests", unit=MetricUnit.Count, value=1)
    metrics.add_metric(name="Api5xx", unit=MetricUnit.Count, value=1 if status >= 500 else 0)
    return response
