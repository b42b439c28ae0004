"""``GET .../taskInstances/{task_id}/logs/{try_number}``: one try's log, as Airflow's ``TaskInstancesLogResponse``
(JSON) or one ``StructuredLogMessage`` a line (``Accept: application/x-ndjson``).

A try's log is written as it grows and whole when the try ends (``updraft.runtime.logs``: the task log group on
AWS, the bucket in local mode). A running try's answer carries Airflow's ``continuation_token``: sent back as
``token``, it gets only the lines written since (a follower's loop, as Airflow's UI and clients do); a finished
try's answer ends with a null token (its log is complete). Each line is one message's ``event`` (a line longer
than ``LINE_CHARS`` is several).

An answer stays under what API Gateway passes (``answer_size``): a log longer than that comes in pages, each with
a continuation token for the next (``download_logs`` set in it, as Airflow marks a full download's token), the
last page's null for a finished try: a client that follows the token while there is one, as Airflow's do, reads
the whole log. ``full_content`` starts from the beginning unless the token is a page's.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from updraft.api.answer_size import MAX_ANSWER_BYTES, carried_size
from updraft.api.errors import BadRequest, NotFound
from updraft.api.lookups import dag_or_404, run_or_404
from updraft.api.routing import Call, Reply, RouteTable
from updraft.model.records import UNMAPPED, TIKey
from updraft.model.states import SLOT_HOLDING_STATES

routes = RouteTable()

NDJSON = "application/x-ndjson"
# The longest message: a longer line is cut into messages of this many characters, so a page holds at least one
# (a character is 14 bytes at most once escaped twice, so one message carries under 4 MB).
LINE_CHARS = 256 * 1024
# What a page's messages may carry: the answer's limit less the room of its token, its keys and its envelope.
PAGE_BYTES = MAX_ANSWER_BYTES - 4096


def _token(position: int, *, page: bool = False) -> str:
    state: dict[str, Any] = {"end_of_log": False, "log_pos": position}
    if page:
        state["download_logs"] = True
    return base64.urlsafe_b64encode(json.dumps(state).encode()).decode()


def _position(token: str | None) -> tuple[int, bool]:
    """Where the last answer ended (0: from the start), and whether it was a page of a longer log; a token not
    issued here is Airflow's 400."""
    if not token:
        return 0, False
    try:
        state = json.loads(base64.urlsafe_b64decode(token.encode()))
        position, page = state["log_pos"], state.get("download_logs") is True
    except (ValueError, TypeError, KeyError, AttributeError, binascii.Error):
        position, page = None, False
    if not isinstance(position, int) or isinstance(position, bool) or position < 0:
        raise BadRequest("Bad Signature. Please use only the tokens provided by the API.")
    return position, page


def _events(text: str) -> list[str]:
    """The log's messages: its lines, a line longer than ``LINE_CHARS`` in pieces of that many characters."""
    out: list[str] = []
    for line in text.splitlines():
        if len(line) <= LINE_CHARS:
            out.append(line)
        else:
            out.extend(line[at:at + LINE_CHARS] for at in range(0, len(line), LINE_CHARS))
    return out


def _page(events: list[str], start: int) -> list[dict[str, Any]]:
    """The messages from ``start`` that fit in one answer (at least one)."""
    page: list[dict[str, Any]] = []
    used = 0
    for event in events[start:]:
        message = {"timestamp": None, "event": event}
        cost = carried_size(message) + 4  # and the separator, escaped
        if page and used + cost > PAGE_BYTES:
            break
        page.append(message)
        used += cost
    return page


def _running(ti: Any, try_number: int) -> bool:
    return bool(ti.try_number == try_number and ti.state is not None and ti.state in SLOT_HOLDING_STATES)


def _messages(call: Call, key: TIKey, try_number: int, start: int) -> tuple[list[dict[str, Any]], str | None]:
    """The try's log lines from ``start`` (as many as one answer carries), and the token a client sends next
    (None: the log is complete and this was its end)."""
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
    events = _events(text)
    page = _page(events, start)
    following = start + len(page)
    if following < len(events):
        return page, _token(following, page=True)
    return page, _token(max(len(events), start)) if running else None


@routes.get("/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/logs/{try_number}")
def get_log(call: Call) -> Any:
    q = call.query
    map_index = q.integer("map_index", UNMAPPED)
    full = q.boolean("full_content", False)
    token = q.string("token")
    q.check()
    key = TIKey(call.path("dag_id"), call.path("dag_run_id"), call.path("task_id"), map_index)
    position, paged = _position(token)
    messages, following = _messages(call, key, call.int_path("try_number"), 0 if full and not paged else position)
    if NDJSON in (call.request.header("Accept") or ""):  # Airflow's streamed answer gives the token in a header
        return Reply(200, "".join(json.dumps(m) + "\n" for m in messages), content_type=NDJSON,
                     headers={"Airflow-Continuation-Token": following} if following else {})
    return {"content": messages, "continuation_token": following}
