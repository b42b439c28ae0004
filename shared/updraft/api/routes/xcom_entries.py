"""XCom entries of task instances: ``GET .../taskInstances/{task_id}/xcomEntries`` (``~`` for the DAG, the run
and the task) and ``GET .../xcomEntries/{xcom_key}``, as Airflow's ``XComResponse``.

Updraft stores a JSON value per XCom (what a task returned or pushed), so the value is returned as stored; with
``stringify`` it is its string form, as Airflow's ``XComResponseString``. An entry's ``timestamp`` is when its
try ended (XComs are written during the try; the store keeps no separate time for them).
"""

from __future__ import annotations

from typing import Any

from updraft.api.errors import NotFound
from updraft.api.formats import iso, pattern_matcher
from updraft.api.lookups import WILDCARD, display_name, field_keys
from updraft.api.pagination import page_of, paginate
from updraft.api.routes.task_instances import run_instances, runs_of
from updraft.api.routing import Call, RouteTable
from updraft.model.records import UNMAPPED

routes = RouteTable()

ENTRIES = "/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/xcomEntries"
ORDER = field_keys("dag_id", "task_id", "run_id", "map_index", "key", "timestamp", "logical_date", "run_after")


def _entries(call: Call, task_id: str, map_index: int | None, with_values: bool) -> list[dict[str, Any]]:
    out = []
    for run in runs_of(call, call.path("dag_id"), call.path("dag_run_id")):
        sdag = call.store.get_serialized_dag(run.dag_id, run.dag_hash)
        tasks = getattr(sdag, "task_dict", {})
        ended = {(ti.task_id, ti.map_index): ti.end_date or ti.start_date for ti in run_instances(call, run, sdag)}
        task_ids = sorted(tasks) if task_id == WILDCARD else [task_id]
        for tid in task_ids:
            task = tasks.get(tid)
            for (index, key), value in sorted(call.store.shown_xcoms(run.dag_id, run.run_id, tid, map_index).items()):
                entry = {
                    "key": key, "timestamp": iso(ended.get((tid, index)) or run.run_after or run.queued_at),
                    "logical_date": iso(run.logical_date), "map_index": index, "task_id": tid,
                    "dag_id": run.dag_id, "run_id": run.run_id, "dag_display_name": display_name(sdag, run.dag_id),
                    "task_display_name": (task.task_display_name if task is not None else None) or tid,
                    "run_after": iso(run.run_after or run.logical_date or run.queued_at),
                }
                if with_values:
                    entry["value"] = value
                out.append(entry)
    return out


@routes.get(ENTRIES)
def get_xcom_entries(call: Call) -> dict[str, Any]:
    q = call.query
    page = page_of(q, ["dag_id", "task_id", "run_id", "map_index", "key"])
    key = q.string("xcom_key")
    map_index = q.integer("map_index")
    matches_key = pattern_matcher(q.string("xcom_key_pattern"))
    q.check()
    entries = [e for e in _entries(call, call.path("task_id"), map_index, with_values=False)
               if key in (None, e["key"]) and matches_key(e["key"])]
    found, total = paginate(entries, page, ORDER)
    return {"xcom_entries": found, "total_entries": total}


@routes.get(ENTRIES + "/{xcom_key}")
def get_xcom_entry(call: Call) -> dict[str, Any]:
    q = call.query
    map_index = q.integer("map_index", UNMAPPED)
    q.boolean("deserialize", False)  # stored values are JSON already: deserialized or not, the same value
    stringify = q.boolean("stringify", False)
    q.check()
    key = call.path("xcom_key")
    found = [e for e in _entries(call, call.path("task_id"), map_index, with_values=True) if e["key"] == key]
    if not found:
        raise NotFound(f"XCom entry with key: `{key}` not found")
    entry = found[0]
    if stringify:
        entry["value"] = str(entry["value"])
    return entry
