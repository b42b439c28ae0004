"""Parser Lambda: an S3 notification names DAG files; each is parsed in an isolated child process and stored.

Configuration comes from the environment the stack sets, read by ``updraft.config.UpdraftConfig``:
``UPDRAFT_TABLE`` (the store's table), ``AWS_REGION`` (set by Lambda), ``UPDRAFT_BUCKET`` (the environment's
bucket: records naming another bucket are rejected, never read; also where serialized DAGs too large for an item
go), optional ``UPDRAFT_DAGS_PREFIX`` (the DAGs folder's prefix, as the
workers read it: keys outside it are ignored, paths are relative to it), optional ``UPDRAFT_DYNAMODB_ENDPOINT``
(local mode's embedded DynamoDB), optional ``UPDRAFT_PLUGINS_FOLDER`` (plugins whose timetables DAG files use).
Clients and the store are built on first use and kept by the warm container (``updraft.services``).

Metrics (CloudWatch EMF, namespace ``UPDRAFT_METRICS_NAMESPACE``, dimension ``service=updraft-parser``), per
invocation: ``DagFilesParsed`` (files parsed) and ``ImportErrors`` (of those, files with at least one import
error), ``RejectedRecords`` (records naming another bucket or a bad key) and ``FailedDagFiles`` (files whose
handling failed, e.g. their store write; the event's other files are still handled). The stack alarms on
``ImportErrors``: a broken upload is otherwise visible only in the UI. A file whose handling failed with attempts
left (``UPDRAFT_PARSE_ATTEMPTS``) makes the invocation raise once the event's other files are handled, so Lambda
retries the event (twice, then the dead-letter queue); at the last attempt the file gets an import error instead.
Every invocation records the DAG processor's heartbeat (at most every 30 s per container) for
``GET /monitor/health``. Airflow's DAG processor metrics (``dag_processing.*``, ``dagbag_size``...) are emitted
by ``updraft.metrics``.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from updraft.config import UpdraftConfig
from updraft.parsing.s3_events import ParseHandlingFailed, handle_dag_file_events
from updraft.parsing.scrub import use_dag_code_credentials
from updraft.process_guard import make_undumpable
from updraft.services import shared_services as services

make_undumpable()  # before this process holds a client or runs user code: see updraft.process_guard

SERVICE = "updraft-parser"  # the metrics' dimension the stack's ImportErrors alarm watches
logger = Logger(service=SERVICE)
metrics = Metrics(namespace=UpdraftConfig.from_env().metrics_namespace, service=SERVICE)


def _import_error_count(store: Any) -> int | None:
    """The environment's import errors (Airflow's ``dag_processing.import_errors`` gauge); None if unreadable."""
    try:
        return len(store.list_import_errors())
    except Exception:  # a metric is not worth failing the invocation, whose files are stored already
        logger.warning("import errors not counted", exc_info=True)
        return None


@metrics.log_metrics
@logger.inject_lambda_context
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    svc = services()  # plugins are loaded in each file's child process only (ParseOptions.plugins_folder)
    if svc.dag_code_credentials is not None:  # parse-time code gets the DAG-code role's credentials, not ours
        use_dag_code_credentials(svc.dag_code_credentials.environment)
    result = handle_dag_file_events(event, s3_client=svc.client("s3"), prefix=svc.config.dags_prefix,
                                    bucket=svc.config.bucket, store=svc.store, options=svc.parse_options,
                                    paused_at_creation=svc.config.dags_are_paused_at_creation,
                                    attempts=svc.config.parse_attempts)
    parsed = result["parsed"].values()
    from updraft.store.heartbeats import DAG_PROCESSOR, HEARTBEAT_EVERY  # the store's modules: not at cold import

    svc.store.heartbeat_component(DAG_PROCESSOR, dt.datetime.now(dt.UTC), every=HEARTBEAT_EVERY)
    metrics.add_metric(name="DagFilesParsed", unit=MetricUnit.Count, value=len(parsed))
    metrics.add_metric(name="ImportErrors", unit=MetricUnit.Count,
                       value=sum(1 for entry in parsed if entry["import_errors"]))
    svc.metrics.files_parsed(result.get("parse_seconds", {}), dags=sum(len(entry["dag_ids"]) for entry in parsed),
                             failed=len(result.get("failed") or ()), import_errors=_import_error_count(svc.store))
    for name, problems in (("RejectedRecords", result.get("rejected")), ("FailedDagFiles", result.get("failed"))):
        if problems:
            metrics.add_metric(name=name, unit=MetricUnit.Count, value=len(problems))
            logger.error(f"{name}: {len(problems)}", extra={"problems": problems})
    logger.info("parsed DAG files", extra={"parsed": list(result["parsed"]), "removed": result["removed"],
                                           "deactivated": result.get("deactivated")})
    if result.get("retry"):  # Lambda delivers the event again (its async retries); handled files are unchanged
        raise ParseHandlingFailed(f"handling failed, to be retried: {', '.join(result['retry'])}")
    return result
