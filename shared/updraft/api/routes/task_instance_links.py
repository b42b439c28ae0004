"""Where a try's log lives outside the API: ``GET .../taskInstances/{task_id}/links`` (Airflow's
ExtraLinkCollectionResponse) and ``GET .../{task_id}/externalLogUrl/{try_number}`` (ExternalLogUrlResponse).

Airflow fills it from the operator's ``operator_extra_links`` (mostly providers', which Updraft does not bundle).
What Updraft adds is where a try's log lives on AWS: ``CloudWatch Logs``, the try's log stream in the CloudWatch
console, when the environment writes task logs there (``UPDRAFT_TASK_LOG_GROUP``: every deployed environment).
Local mode and ``dags test`` keep logs in the bucket, which the log routes serve: no link there.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from updraft.api.errors import BadRequest
from updraft.api.routes.task_instances import one_instance
from updraft.api.routing import Call, RouteTable
from updraft.model.records import UNMAPPED, TIKey

routes = RouteTable()

CLOUDWATCH = "CloudWatch Logs"


def log_stream_url(region: str, log_group: str, stream: str) -> str:
    """The CloudWatch console's page of one log stream (its URL fragment escapes ``%`` as ``$25``, twice)."""
    def console(part: str) -> str:
        return quote(quote(part, safe=""), safe="").replace("%", "$")

    return (f"https://{region}.console.aws.amazon.com/cloudwatch/home?region={region}"
            f"#logsV2:log-groups/log-group/{console(log_group)}/log-events/{console(stream)}")


def _stream_url(call: Call, ti: dict[str, Any], try_number: int) -> str:
    from updraft.runtime.logs import CloudWatchLogSink

    config = call.services.config
    key = TIKey(ti["dag_id"], ti["dag_run_id"], ti["task_id"], ti["map_index"])
    return log_stream_url(config.region, config.task_log_group, CloudWatchLogSink.stream_name(key, try_number))


@routes.get("/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/links")
def get_extra_links(call: Call) -> dict[str, Any]:
    map_index = call.query.integer("map_index", UNMAPPED)
    asked_try = call.query.integer("try_number", ge=0)
    call.query.check()
    ti = one_instance(call, map_index)
    try_number = asked_try if asked_try is not None else ti["try_number"]
    links: dict[str, str | None] = {}
    if call.services.config.task_log_group:
        links[CLOUDWATCH] = _stream_url(call, ti, try_number) if try_number else None  # no try yet: no stream
    return {"extra_links": links, "total_entries": len(links)}


@routes.get("/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/externalLogUrl/{try_number}")
def get_external_log_url(call: Call) -> dict[str, Any]:
    try_number = call.int_path("try_number")
    map_index = call.query.integer("map_index", UNMAPPED)
    call.query.check()
    if not call.services.config.task_log_group:
        raise BadRequest("Task log handler does not support external logs.")  # local mode: the bucket's logs
    return {"url": _stream_url(call, one_instance(call, map_index), try_number)}
