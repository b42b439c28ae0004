"""``GET .../taskInstances/{task_id}/logs/{try_number}``: one try's log, as Airflow's ``TaskInstancesLogResponse``
(JSON) or one ``StructuredLogMessage`` a line (``Accept: application/x-ndjson``).

A try's log is delivered whole when the try ends (``updraft.runtime.logs``: the task log group on AWS, the bucket
in local mode), so a finished try's log is complete and a running try has none yet: ``continuation_token`` is
always null and ``full_content`` changes nothing. Each line of the log is one message's ``event``.
"""

from __future__ import annotations

import json
from typing import Any

from updraft.api.errors import NotFound
from updraft.api.lookups import dag_or_404, run_or_404
from updraft.api.routing import Call, Reply, RouteTable
from updraft.model.records import UNMAPPED, TIKey

routes = RouteTable()

NDJSON = "application/x-ndjson"


def _messages(call: Call, key: TIKey, try_number: int) -> list[dict[str, Any]]:
    dag_or_404(call, key.dag_id)
    run = run_or_404(call, key.dag_id, key.run_id)
    ti = call.store.get_ti(key)
    if ti is None:
        sdag = call.store.get_serialized_dag(run.dag_id, run.dag_hash)
        if key.task_id not in getattr(sdag, "task_dict", {}) or key.map_index != UNMAPPED:
            raise NotFound("TaskInstance not found")
        return [{"timestamp": None, "event": f"{key.label} has not started a try yet"}]
    sink = call.services.log_sink
    text = sink.read(key, try_number) if sink is not None and 0 < try_number <= ti.try_number else None
    if text is None:
        running = ti.try_number == try_number and ti.state is not None and ti.state.value in ("queued", "running")
        why = " (a try's log is written when the try ends)" if running else ""
        return [{"timestamp": None, "event": f"No log for try {try_number} of {key.label}{why}"}]
    return [{"timestamp": None, "event": line} for line in text.splitlines()]


@routes.get("/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/logs/{try_number}")
def get_log(call: Call) -> Any:
    q = call.query
    map_index = q.integer("map_index", UNMAPPED)
    q.boolean("full_content", False)
    q.check()
    key = TIKey(call.path("dag_id"), call.path("dag_run_id"), call.path("task_id"), map_index)
    messages = _messages(call, key, call.int_path("try_number"))
    if NDJSON in (call.request.header("Accept") or ""):
        return Reply(200, "".join(json.dumps(m) + "\n" for m in messages), content_type=NDJSON)
    return {"content": messages, "continuation_token": None}
