"""``GET .../taskInstances/{task_id}/logs/{try_number}``: one try's log, as Airflow's ``TaskInstancesLogResponse``
(JSON) or one ``StructuredLogMessage`` a line (``Accept: application/x-ndjson``).

A try's log is written as it grows and whole when the try ends (``updraft.runtime.logs``: the task log group on
AWS, the bucket in local mode). A running try's answer carries Airflow's ``continuation_token``: sent back as
``token``, it gets only the lines written since (a follower's loop, as Airflow's UI and clients do); a finished
try's is complete (the token is null, and ``full_content`` changes nothing). Each line is one message's ``event``.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from updraft.api.errors import BadRequest, NotFound
from updraft.api.lookups import dag_or_404, run_or_404
from updraft.api.routing import Call, Reply, RouteTable
from updraft.model.records import UNMAPPED, TIKey

routes = RouteTable()

NDJSON = "application/x-ndjson"


def _token(position: int) -> str:
    return base64.urlsafe_b64encode(json.dumps({"end_of_log": False, "log_pos": position}).encode()).decode()


def _position(token: str | None) -> int:
    """Where a follower's last answer ended (0: from the start); a token not issued here is Airflow's 400."""
    if not token:
        return 0
    try:
        position = json.loads(base64.urlsafe_b64decode(token.encode()))["log_pos"]
    except (ValueError, TypeError, KeyError, binascii.Error):
        position = None
    if not isinstance(position, int) or position < 0:
        raise BadRequest("Bad Signature. Please use only the tokens provided by the API.")
    return position


def _running(ti: Any, try_number: int) -> bool:
    return bool(ti.try_number == try_number and ti.state is not None and ti.state.value in ("queued", "running"))


def _messages(call: Call, key: TIKey, try_number: int, start: int) -> tuple[list[dict[str, Any]], str | None]:
    """The try's log lines from ``start``, and the token a follower sends next (None: the log is complete)."""
    dag_or_404(call, key.dag_id)
    run = run_or_404(call, key.dag_id, key.run_id)
    ti = call.store.get_ti(key)
    if ti is None:
        sdag = call.store.get_serialized_dag(run.dag_id, run.dag_hash)
        if key.task_id not in getattr(sdag, "task_dict", {}) or key.map_index != UNMAPPED:
            raise NotFound("TaskInstance not found")
        return [{"timestamp": None, "event": f"{key.label} has not started a try yet"}], None
    sink = call.services.log_sink
    text = sink.read(key, try_number) if sink is not None and 0 < try_number <= ti.try_number else None
    running = _running(ti, try_number)
    if text is None:
        why = " (it has written nothing yet)" if running else ""
        return [{"timestamp": None, "event": f"No log for try {try_number} of {key.label}{why}"}], (
            _token(start) if running else None)
    lines = text.splitlines()
    if not running:
        return [{"timestamp": None, "event": line} for line in lines], None
    return [{"timestamp": None, "event": line} for line in lines[start:]], _token(max(len(lines), start))


@routes.get("/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/logs/{try_number}")
def get_log(call: Call) -> Any:
    q = call.query
    map_index = q.integer("map_index", UNMAPPED)
    full = q.boolean("full_content", False)
    token = q.string("token")
    q.check()
    key = TIKey(call.path("dag_id"), call.path("dag_run_id"), call.path("task_id"), map_index)
    messages, following = _messages(call, key, call.int_path("try_number"), 0 if full else _position(token))
    if NDJSON in (call.request.header("Accept") or ""):
        return Reply(200, "".join(json.dumps(m) + "\n" for m in messages), content_type=NDJSON)
    return {"content": messages, "continuation_token": following}
