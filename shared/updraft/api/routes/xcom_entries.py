"""XCom entries of task instances: ``GET .../taskInstances/{task_id}/xcomEntries`` (``~`` for the DAG, the run
and the task) and ``GET .../xcomEntries/{xcom_key}``, as Airflow's ``XComResponse``; and a user's own entries,
as Airflow 3's UI adds and edits them: ``POST .../xcomEntries`` (a new key; 409 when the instance has it),
``PATCH .../xcomEntries/{xcom_key}`` (a new value for an existing one) and ``DELETE``.

A value written through the API is the client's JSON, stored as it is (Airflow's ``serialize=False``): JSON holds
nothing serde would tag, and a value holding a key serde reads as a tag (``__classname__``, ...) is refused, as
Airflow refuses it, so no client-made value is read back as a tuple or a class. What it shows is masked as a
task's pushed values are (a value under a sensitive key). The instance must exist (Airflow's XCom rows belong to
their task instance); a later try of the task clears its XComs, as Airflow's does.

Updraft stores a JSON value per XCom (what a task returned or pushed, values JSON cannot hold tagged as Airflow's
serde tags them), so the value is returned as stored; with ``deserialize`` it is Airflow's readable form of it
(:func:`updraft.model.serde_tags.stringify`), with ``stringify`` its string form, as Airflow's
``XComResponseString``. An entry's ``timestamp`` is when its
try ended (XComs are written during the try; the store keeps no separate time for them).

A value whose answer would be larger than the API can send (``answer_size``) is refused with a 413 whose detail
says so and, when the value is stored in S3 (as a large one is), gives a link to it, valid ``LINK_SECONDS``: the
object is the value (its masked form) as gzip-compressed JSON ``{"v": value}``, served with ``Content-Encoding:
gzip``. Airflow sends any size; a 6 MB answer cannot leave Lambda, and a value cut short would be another value,
so this refuses rather than answer one, as an object-storage XCom backend in Airflow gives the object's path
instead of the value. Only ``max_json_bytes`` of a value is ever decompressed to find this out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from updraft.api.answer_size import MAX_ANSWER_BYTES, carried_size
from updraft.api.body import Field, parse_body
from updraft.api.errors import Conflict, ContentTooLarge, NotFound, Unprocessable, issue
from updraft.api.formats import iso, pattern_matcher
from updraft.api.lookups import WILDCARD, dag_or_404, display_name, field_keys, run_after
from updraft.api.pagination import page_of, paginate
from updraft.api.routes.task_instances import run_instances, runs_of
from updraft.api.routing import Call, Reply, RouteTable
from updraft.model.records import UNMAPPED, TIKey
from updraft.model.serde_tags import reserved_keys_problem
from updraft.model.serde_tags import stringify as readable
from updraft.secrets.masker import redact
from updraft.store.blobs import Oversized

if TYPE_CHECKING:
    from updraft.api.models import XComCollectionResponse, XComResponse, XComResponseNative

routes = RouteTable()

ENTRIES = "/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/xcomEntries"
LINK_SECONDS = 900
CREATE_BODY = {"key": Field("str", required=True, nullable=False, key=True), "value": Field("json", required=True),
               "map_index": Field("int", nullable=False, minimum=-1)}
UPDATE_BODY = {"value": Field("json", required=True), "map_index": Field("int", nullable=False, minimum=-1)}
ORDER = field_keys("dag_id", "task_id", "run_id", "map_index", "key", "timestamp", "logical_date", "run_after")


def _entries(call: Call, task_id: str, map_index: int | None, with_values: bool,
             max_json_bytes: int | None = None) -> list[tuple[XComResponse, Any]]:
    """The entries of the path's runs, each with its shown value: with values, each read up to ``max_json_bytes``
    of JSON (a longer one is ``Oversized``); without, none is read (the value is None)."""
    out: list[tuple[XComResponse, Any]] = []
    for run in runs_of(call, call.path("dag_id"), call.path("dag_run_id")):
        sdag = call.store.get_serialized_dag(run.dag_id, run.dag_hash)
        tasks = getattr(sdag, "task_dict", {})
        ended = {(ti.task_id, ti.map_index): ti.end_date or ti.start_date for ti in run_instances(call, run, sdag)}
        task_ids = sorted(tasks) if task_id == WILDCARD else [task_id]
        for tid in task_ids:
            task = tasks.get(tid)
            shown = call.store.shown_xcoms(run.dag_id, run.run_id, tid, map_index,
                                           max_json_bytes=max_json_bytes if with_values else 0)
            for (index, key), value in sorted(shown.items()):
                entry: XComResponse = {
                    "key": key, "timestamp": iso(ended.get((tid, index)) or run_after(run)),
                    "logical_date": iso(run.logical_date), "map_index": index, "task_id": tid,
                    "dag_id": run.dag_id, "run_id": run.run_id, "dag_display_name": display_name(sdag, run.dag_id),
                    "task_display_name": (task.task_display_name if task is not None else None) or tid,
                    "run_after": iso(run_after(run)),
                }
                out.append((entry, value if with_values else None))
    return out


@routes.get(ENTRIES)
def get_xcom_entries(call: Call) -> XComCollectionResponse:
    q = call.query
    page = page_of(q, ["dag_id", "task_id", "run_id", "map_index", "key"])
    key = q.string("xcom_key")
    map_index = q.integer("map_index")
    matches_key = pattern_matcher(q.string("xcom_key_pattern"))
    q.check()
    entries = [e for e, _shown in _entries(call, call.path("task_id"), map_index, with_values=False)
               if key in (None, e["key"]) and matches_key(e["key"])]
    found, total = paginate(entries, page, ORDER)
    return {"xcom_entries": found, "total_entries": total}


@routes.get(ENTRIES + "/{xcom_key}")
def get_xcom_entry(call: Call) -> XComResponseNative:
    q = call.query
    map_index = q.integer("map_index", UNMAPPED)
    deserialize = q.boolean("deserialize", False)
    stringify = q.boolean("stringify", False)
    q.check()
    key = call.path("xcom_key")
    found = [(e, value) for e, value in _entries(call, call.path("task_id"), map_index, with_values=True,
                                                 max_json_bytes=MAX_ANSWER_BYTES) if e["key"] == key]
    if not found:
        raise NotFound(f"XCom entry with key: `{key}` not found")
    entry, value = found[0]
    if not isinstance(value, Oversized):
        if deserialize:  # Airflow's readable form: tuples as (a,b), other tagged values as their class's name
            value = readable(value)
        if stringify:
            value = str(value)
        answer: XComResponseNative = {**entry, "value": value}
        if carried_size(answer) <= MAX_ANSWER_BYTES:
            return answer
    raise _too_large(call, entry, value)


def _too_large(call: Call, entry: XComResponse, value: Any) -> ContentTooLarge:
    """The 413 for an entry whose value is too large to answer, with a link to the value where it is in S3."""
    located = value
    if not isinstance(located, Oversized):  # read, but too large once answered: where is it stored?
        located = call.store.shown_xcoms(entry["dag_id"], entry["run_id"], entry["task_id"], entry["map_index"],
                                         max_json_bytes=0)[(entry["map_index"], entry["key"])]
    url = None
    if located.s3_key is not None:
        url = call.services.client("s3").generate_presigned_url(
            "get_object", Params={"Bucket": call.services.config.bucket, "Key": located.s3_key},
            ExpiresIn=LINK_SECONDS)
    where = (f"download it from download_url within {LINK_SECONDS // 60} minutes (gzip-compressed JSON "
             '{"v": value})') if url else "a task can pull it"
    return ContentTooLarge({
        "reason": "xcom_value_too_large",
        "message": f"The value of XCom {entry['key']!r} is larger than the API can answer "
                   f"({MAX_ANSWER_BYTES:,} bytes); {where}.",
        "max_bytes": MAX_ANSWER_BYTES, "download_url": url, "download_url_expires_in": LINK_SECONDS if url else None})


def _value(body: dict[str, Any]) -> Any:
    """The body's value, unless it holds a key serde reads as a tag (Airflow's 422)."""
    value = body["value"]
    if problem := reserved_keys_problem(value):
        raise Unprocessable([issue("value_error", ("body", "value"), f"Value error, {problem}", value)])
    return value


def _written(call: Call, key: TIKey, xcom_key: str) -> XComResponseNative:
    """The entry just written, as Airflow's ``XComResponseNative``."""
    entry, value = next((e, value) for e, value in _entries(call, key.task_id, key.map_index, with_values=True)
                        if e["key"] == xcom_key)
    return {**entry, "value": value}


@routes.post(ENTRIES, status=201)
def create_xcom_entry(call: Call) -> XComResponseNative:
    body = parse_body(call.request.body, CREATE_BODY)
    value = _value(body)
    dag_id, run_id, task_id = call.path("dag_id"), call.path("dag_run_id"), call.path("task_id")
    xcom_key, map_index = body["key"], body.get("map_index", UNMAPPED)
    _meta, latest = dag_or_404(call, dag_id)
    run = call.store.get_run(dag_id, run_id)
    sdag = call.store.get_serialized_dag(dag_id, run.dag_hash) if run is not None else latest
    if task_id not in getattr(sdag, "task_dict", {}):  # in the run's version of the DAG, as Airflow looks
        raise NotFound(f"Task with ID: `{task_id}` not found in dag: `{dag_id}`")
    if run is None:
        raise NotFound(f"Dag Run with ID: `{run_id}` not found for dag: `{dag_id}`")
    key = _instance_key(call, dag_id, run_id, task_id, map_index)
    if (map_index, xcom_key) in call.store.shown_xcoms(dag_id, run_id, task_id, map_index, max_json_bytes=0):
        raise Conflict(f"The XCom with key: `{xcom_key}` with mentioned task instance already exists.")
    call.store.put_xcom(key, xcom_key, value, now=call.now(), shown=redact(value))
    return _written(call, key, xcom_key)


def _instance_key(call: Call, dag_id: str, run_id: str, task_id: str, map_index: int) -> TIKey:
    key = TIKey(dag_id, run_id, task_id, map_index)
    if call.store.get_ti(key) is None:
        raise NotFound(f"The Task Instance with dag_id: `{dag_id}`, run_id: `{run_id}`, task_id: `{task_id}` and "
                       f"map_index: `{map_index}` was not found")
    return key


def _missing(xcom_key: str) -> NotFound:
    return NotFound(f"The XCom with key: `{xcom_key}` with mentioned task instance doesn't exist.")


def _existing(call: Call, map_index: int) -> TIKey:
    """The path's entry's instance; 404 (Airflow's message) when the entry does not exist."""
    key = TIKey(call.path("dag_id"), call.path("dag_run_id"), call.path("task_id"), map_index)
    found = call.store.shown_xcoms(key.dag_id, key.run_id, key.task_id, map_index, max_json_bytes=0)
    if (map_index, call.path("xcom_key")) not in found:
        raise _missing(call.path("xcom_key"))
    return key


@routes.patch(ENTRIES + "/{xcom_key}")
def update_xcom_entry(call: Call) -> XComResponseNative:
    body = parse_body(call.request.body, UPDATE_BODY)
    value = _value(body)
    key = _existing(call, body.get("map_index", UNMAPPED))
    xcom_key = call.path("xcom_key")
    call.store.put_xcom(key, xcom_key, value, now=call.now(), shown=redact(value))
    return _written(call, key, xcom_key)


@routes.delete(ENTRIES + "/{xcom_key}")
def delete_xcom_entry(call: Call) -> Reply:
    q = call.query
    map_index = q.integer("map_index", UNMAPPED, ge=UNMAPPED)
    q.check()
    if not call.store.delete_xcom(TIKey(call.path("dag_id"), call.path("dag_run_id"), call.path("task_id"),
                                         map_index), call.path("xcom_key")):
        raise _missing(call.path("xcom_key"))
    return Reply(204)
