"""A task instance's links: ``GET .../taskInstances/{task_id}/links`` (Airflow's ExtraLinkCollectionResponse) and
where a try's log lives outside the API, ``GET .../{task_id}/externalLogUrl/{try_number}`` (ExternalLogUrlResponse).

The links are Airflow's: the task's operator extra links (``SerializedTask.extra_links``, recorded by the parser:
the operator's own, a plugin's for its class, the plugins' global ones), each answered with the URL its try stored
as XCom under the link's key (``runtime.operator_links``), ``null`` when there is none (no try yet, or the link had
no URL). The API reads the store only: it never imports DAG code or plugins. As in Airflow, the XComs are the task
instance's (a new try clears them), so every ``try_number`` gets the latest try's.

What Updraft adds is where a try's log lives on AWS: ``CloudWatch Logs``, the try's log stream in the CloudWatch
console, when the environment writes task logs there (``UPDRAFT_TASK_LOG_GROUP``: every deployed environment);
an operator link of the same name wins. Local mode and ``dags test`` keep logs in the bucket, which the log routes
serve: no log link there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from updraft.api.errors import BadRequest, NotFound
from updraft.api.lookups import run_or_404
from updraft.api.routes.task_instances import one_instance, run_dag
from updraft.api.routing import Call, RouteTable
from updraft.config import ConfigError
from updraft.model.records import UNMAPPED, TIKey
from updraft.store.blobs import Oversized

if TYPE_CHECKING:
    from updraft.api.models import ExternalLogUrlResponse, ExtraLinkCollectionResponse, TaskInstanceResponse

routes = RouteTable()

CLOUDWATCH = "CloudWatch Logs"
# A stored link longer than this is not read (a URL is far shorter; the XCom could be anything a try pushed).
MAX_LINK_BYTES = 64 * 1024


def log_stream_url(region: str, log_group: str, stream: str) -> str:
    """The CloudWatch console's page of one log stream (its URL fragment escapes ``%`` as ``$25``, twice)."""
    def console(part: str) -> str:
        return quote(quote(part, safe=""), safe="").replace("%", "$")

    return (f"https://{region}.console.aws.amazon.com/cloudwatch/home?region={region}"
            f"#logsV2:log-groups/log-group/{console(log_group)}/log-events/{console(stream)}")


def _stream_url(call: Call, ti: TaskInstanceResponse, try_number: int, log_group: str) -> str:
    # lazy: cold start (the API's build imports every route module; log sinks only here)
    from updraft.runtime.logs import CloudWatchLogSink

    region = call.services.config.region
    if not region:
        raise ConfigError("CloudWatch log links need AWS_REGION in the environment")
    key = TIKey(ti["dag_id"], ti["dag_run_id"], ti["task_id"], ti["map_index"])
    return log_stream_url(region, log_group, CloudWatchLogSink.stream_name(key, try_number))


def _url(value: Any) -> str | None:
    """A stored link's URL as Airflow answers it (its string form), ``None`` for no URL or one too large to read."""
    if value is None or value == "" or isinstance(value, Oversized):
        return None
    return value if isinstance(value, str) else str(value)


def _operator_links(call: Call, ti: TaskInstanceResponse) -> dict[str, str | None]:
    """The task's operator extra links, name -> the URL its try stored (the masked form the API shows)."""
    sdag = run_dag(call, run_or_404(call, ti["dag_id"], ti["dag_run_id"]))
    task = getattr(sdag, "task_dict", {}).get(ti["task_id"])
    if task is None:
        raise NotFound(f"Task with ID = {ti['task_id']} not found")
    if not task.extra_links:
        return {}
    stored = call.store.shown_xcoms(ti["dag_id"], ti["dag_run_id"], ti["task_id"], ti["map_index"],
                                    max_json_bytes=MAX_LINK_BYTES)
    return {name: _url(stored.get((ti["map_index"], xcom_key))) for name, xcom_key in task.extra_links.items()}


@routes.get("/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/links")
def get_extra_links(call: Call) -> ExtraLinkCollectionResponse:
    map_index = call.query.integer("map_index", UNMAPPED)
    asked_try = call.query.integer("try_number", ge=0)
    call.query.check()
    ti = one_instance(call, map_index)
    try_number = asked_try if asked_try is not None else ti["try_number"]
    links = _operator_links(call, ti)
    log_group = call.services.config.task_log_group
    if log_group and CLOUDWATCH not in links:
        links[CLOUDWATCH] = _stream_url(call, ti, try_number, log_group) if try_number else None  # no try: no stream
    return {"extra_links": dict(sorted(links.items())), "total_entries": len(links)}


@routes.get("/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/externalLogUrl/{try_number}")
def get_external_log_url(call: Call) -> ExternalLogUrlResponse:
    try_number = call.int_path("try_number")
    map_index = call.query.integer("map_index", UNMAPPED)
    call.query.check()
    log_group = call.services.config.task_log_group
    if not log_group:
        raise BadRequest("Task log handler does not support external logs.")  # local mode: the bucket's logs
    return {"url": _stream_url(call, one_instance(call, map_index), try_number, log_group)}
