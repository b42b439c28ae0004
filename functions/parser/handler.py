"""Parser Lambda: an S3 notification names DAG files; each is parsed in an isolated child process."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger

from updraft.parsing.s3_events import handle_dag_file_events

logger = Logger(service="updraft-parser")
_s3_client = None


def _s3() -> Any:
    """Created on first use so a cold start that never reaches S3 does not pay for boto3."""
    global _s3_client
    if _s3_client is None:
        import boto3

        _s3_client = boto3.client("s3")
    return _s3_client


@logger.inject_lambda_context
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    result = handle_dag_file_events(event, s3_client=_s3())
    logger.info("parsed DAG files", extra={"parsed": list(result["parsed"]), "removed": result["removed"]})
    return result
