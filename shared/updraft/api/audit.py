"""The audit log: every change made through the API (and so through the CLI) becomes an event log entry.

:func:`record_change` runs once per successful non-GET request (``updraft.api.app``) and builds the entry as
Airflow's ``action_logging`` does: the event is the route function's name (Airflow's endpoint name, its
operationId), the owner is the caller API Gateway identified, ``dag_id``/``task_id``/``run_id``/``logical_date``
come from the path, query and body, and ``extra`` is the query, path and JSON body redacted by the secrets masker
(:func:`updraft.secrets.masker.redact`, as Airflow's audit uses its ``secrets_masker``: one rule, with the words
``AIRFLOW__CORE__SENSITIVE_VAR_CONN_NAMES`` adds, decides what is hidden; a variable's value and a connection's
``extra`` values are hidden always) plus the method.
A dry-run clear changes nothing and is not recorded, as in Airflow; nor are the reads sent as POSTs (the batch
lists) and the dry-run routes (:data:`READS`). Token requests (``/auth/...``) change nothing either, and carry a
password: not recorded (Airflow does not log them).

Recording never fails the request it records: any error is logged and the response goes out. The entry's id
comes from API Gateway's request id and request time, so a request delivered twice is recorded once
(:mod:`updraft.store.event_logs`).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import uuid
from typing import TYPE_CHECKING, Any

from updraft.api.formats import parse_datetime
from updraft.api.json_text import InvalidJson, loads
from updraft.secrets.masker import REPLACEMENT, redact
from updraft.store.event_logs import EventLog, event_log_id

if TYPE_CHECKING:
    from updraft.api.request import Request
    from updraft.api.routing import Call, Route
    from updraft.store.event_logs import EventLog

log = logging.getLogger(__name__)

# Not copied into ``extra`` (they have their own columns, or are form noise), as in Airflow.
FIELDS_SKIP_LOGGING = frozenset({"csrf_token", "_csrf_token", "is_paused", "dag_id", "task_id", "dag_run_id",
                                 "run_id", "logical_date"})
DRY_RUN_EVENTS = frozenset({"clear_dag_run", "post_clear_task_instances"})
NOT_RECORDED_PREFIXES = ("/auth/", "/ui/session")  # token requests and the UI's sign-in and sign-out
# Routes that are not GETs but change nothing: batch reads with a body, and previews.
READS = frozenset({"get_list_dag_runs_batch", "get_task_instances_batch", "patch_task_instance_dry_run",
                   "patch_task_group_instances_dry_run"})


def recorded(route: Route) -> bool:
    """Whether a successful call of ``route`` is recorded: every change, not reads nor sign-ins (Airflow's
    ``action_logging`` records neither)."""
    return (route.method != "GET" and not route.path.startswith(NOT_RECORDED_PREFIXES)
            and route.endpoint.__name__ not in READS)


def _mask_entity(event: str, fields: dict[str, Any]) -> dict[str, Any]:
    """A variable's value and every value of a connection's ``extra`` are masked whatever their name."""
    out: dict[str, Any] = {}
    for key, value in fields.items():
        if "variable" in event and key in ("val", "value"):
            out[key] = REPLACEMENT
        elif "connection" in event and key == "extra" and value:
            try:
                parsed = loads(value)
            except (TypeError, ValueError):
                out[key] = "Encountered non-JSON in `extra` field"
                continue
            out[key] = ({k: REPLACEMENT for k in parsed} if isinstance(parsed, dict)
                        else "Expected JSON object in `extra` field, got non-dict JSON")
        else:
            out[key] = redact(value, key)
    return out


def _masked_body(event: str, body: dict[str, Any]) -> dict[str, Any]:
    """The body masked; a bulk body's entities (``actions[].entities[]``) each masked as one entity."""
    actions = body.get("actions")
    if ("variable" in event or "connection" in event) and isinstance(actions, list):
        return {**body, "actions": [
            {**action, "entities": [_mask_entity(event, e) if isinstance(e, dict) else e
                                    for e in action["entities"]]}
            if isinstance(action, dict) and isinstance(action.get("entities"), list) else action
            for action in actions]}
    if "variable" in event or "connection" in event:
        return _mask_entity(event, body)
    return {k: redact(v, k) for k, v in body.items()}


def _json_body(request: Request) -> dict[str, Any] | None:
    if "application/json" not in (request.header("Content-Type") or "") or not request.body:
        return None
    try:
        body = loads(request.body)
    except InvalidJson:
        return None
    return body if isinstance(body, dict) else None


def _when_and_request_id(request: Request, now: dt.datetime) -> tuple[dt.datetime, str]:
    """API Gateway's request time and id (the same on a redelivery); a request without them is its own."""
    epoch_ms = request.context.get("requestTimeEpoch")
    when = dt.datetime.fromtimestamp(int(epoch_ms) / 1000, dt.UTC) if isinstance(epoch_ms, int) else now
    return when, str(request.context.get("requestId") or uuid.uuid4())


def entry_for(request: Request, event: str, now: dt.datetime) -> EventLog | None:
    """The entry recording ``request`` as ``event``; None for a dry-run clear (nothing changed)."""
    body = _json_body(request)
    if body is not None and event in DRY_RUN_EVENTS and body.get("dry_run", True):
        return None
    query = {name: values[-1] for name, values in request.query.items() if values}
    params = {**query, **request.path_params}
    extra = {k: redact(v, k) for k, v in params.items() if k not in FIELDS_SKIP_LOGGING}
    if body is not None:
        masked = _masked_body(event, body)
        extra = masked if "variable" in event or "connection" in event else {**extra, **masked}
        params.update(masked)
    if "is_paused" in params:
        extra["is_paused"] = params["is_paused"]
    extra["method"] = request.method
    when, request_id = _when_and_request_id(request, now)

    def text(name: str) -> str | None:
        value = params.get(name)
        return value if isinstance(value, str) else None

    logical_date = parse_datetime(query["logical_date"]) if query.get("logical_date") else None
    return EventLog(event_log_id=event_log_id(when, request_id), when=when, event=event, owner=request.caller,
                    dag_id=text("dag_id"), task_id=text("task_id"), run_id=text("run_id") or text("dag_run_id"),
                    logical_date=logical_date, extra=json.dumps(extra, default=str))


def record_change(call: Call, route: Route) -> None:
    """Record a successful change; never raises (the change is made: its answer must reach the caller)."""
    if not recorded(route):
        return
    try:
        entry = entry_for(call.request, route.endpoint.__name__, call.now())
        if entry is not None:
            call.store.put_event_log(entry)
    except Exception:
        log.exception("the event log entry for %s %s was not recorded", route.method, route.path)
