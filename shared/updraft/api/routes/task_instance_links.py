"""``GET .../taskInstances/{task_id}/links``: a task instance's extra links, as Airflow's ExtraLinkCollectionResponse.

Airflow fills it from the operator's ``operator_extra_links`` (mostly providers', which Updraft does not bundle).
What Updraft adds is where a try's log lives on AWS: ``CloudWatch Logs``, the try's log stream in the CloudWatch
console, when the environment writes task logs there (``UPDRAFT_TASK_LOG_GROUP``: every deployed environment).
Local mode and ``dags test`` keep logs in the bucket, which the log routes serve: no link there.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

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


@routes.get("/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/links")
def get_extra_links(call: Call) -> dict[str, Any]:
    from updraft.runtime.logs import CloudWatchLogSink

    map_index = call.query.integer("map_index", UNMAPPED)
    asked_try = call.query.integer("try_number", ge=0)
    call.query.check()
    ti = one_instance(call, map_index)
    try_number = asked_try if asked_try is not None else ti["try_number"]
    config = call.services.config
    links: dict[str, str | None] = {}
    if config.task_log_group:
        key = TIKey(ti["dag_id"], ti["dag_run_id"], ti["task_id"], map_index)
        links[CLOUDWATCH] = (log_stream_url(config.region, config.task_log_group,
                                            CloudWatchLogSink.stream_name(key, try_number))
                             if try_number else None)  # no try has run: no stream yet
    return {"extra_links": links, "total_entries": len(links)}
