"""DAGs: ``GET/PATCH /dags``, ``GET/PATCH/DELETE /dags/{dag_id}``, ``/dags/{dag_id}/details``, ``/dags/{dag_id}/tasks``
and ``/dagTags``, in Airflow's ``DAGResponse``/``DAGDetailsResponse``/``TaskResponse`` shapes.

Listing reads the DAG rows (one index query per shard, then a batch read) and filters and pages them here; only
the page's DAGs are read as serialized versions (cached per process) for the fields the row does not keep.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from updraft.api.body import Field, parse_body
from updraft.api.errors import BadRequest, NotFound
from updraft.api.formats import iso, iso_duration, pattern_matcher, time_delta
from updraft.api.lookups import dag_or_404, display_name, field_keys, jsonable
from updraft.api.pagination import order, page_of, paginate
from updraft.api.routing import Call, Reply, RouteTable
from updraft.model.limits import dag_runs_limit
from updraft.model.states import DagRunState

if TYPE_CHECKING:
    from updraft.api.models import (
        DAGCollectionResponse,
        DAGDetailsResponse,
        DAGResponse,
        DAGTagCollectionResponse,
        TaskCollectionResponse,
        TaskResponse,
    )
    from updraft.serialization.model import SerializedDAG
    from updraft.store.api import DagMeta

routes = RouteTable()

PATCH_BODY = {"is_paused": Field("bool", required=True, nullable=False)}
DAG_ORDER = {"dag_id": lambda m: m.dag_id, "next_dagrun": lambda m: m.next_dagrun_logical_date,
             "is_paused": lambda m: m.is_paused}


def fileloc(call: Call, relative_fileloc: str) -> str:
    """Where the environment reads the file from (Airflow gives an absolute path on its DAGs volume)."""
    config = call.services.config
    base = f"s3://{config.bucket}/{config.dags_prefix}" if config.bucket else config.dags_prefix
    return base + relative_fileloc


def dag_response(call: Call, meta: DagMeta, sdag: SerializedDAG | None, has_import_errors: bool) -> DAGResponse:
    name = display_name(sdag, meta.dag_id)
    tasks = getattr(sdag, "tasks", [])
    timetable = getattr(sdag, "timetable", None)
    return {
        "dag_id": meta.dag_id, "dag_display_name": name, "is_paused": meta.is_paused, "is_stale": not meta.is_active,
        "last_parsed_time": None, "last_parse_duration": None, "last_expired": None,
        "bundle_name": None, "bundle_version": None,
        "relative_fileloc": meta.relative_fileloc, "fileloc": fileloc(call, meta.relative_fileloc),
        "description": getattr(sdag, "description", None),
        "timetable_summary": meta.timetable_summary,
        "timetable_description": getattr(sdag, "timetable_description", None),
        "timetable_partitioned": bool(getattr(timetable, "partitioned", False)),
        "timetable_periodic": bool(getattr(timetable, "periodic", False)),
        "tags": [{"name": tag, "dag_id": meta.dag_id, "dag_display_name": name} for tag in sorted(meta.tags)],
        "max_active_tasks": meta.max_active_tasks, "max_active_runs": meta.max_active_runs,
        "max_consecutive_failed_dag_runs": getattr(sdag, "max_consecutive_failed_dag_runs", 0),
        "has_task_concurrency_limits": any(t.max_active_tis_per_dag is not None
                                           or t.max_active_tis_per_dagrun is not None for t in tasks),
        "has_import_errors": has_import_errors,
        "next_dagrun_logical_date": iso(meta.next_dagrun_logical_date),
        "next_dagrun_data_interval_start": iso(meta.next_dagrun_data_interval_start),
        "next_dagrun_data_interval_end": iso(meta.next_dagrun_data_interval_end),
        "next_dagrun_run_after": iso(meta.next_dagrun_run_after),
        "allowed_run_types": None,
        "owners": [o.strip() for o in (meta.owners or "").split(",") if o.strip()],
        "is_backfillable": False,  # no backfill route yet
        "file_token": base64.urlsafe_b64encode(meta.relative_fileloc.encode()).decode(),
    }


def _import_error_files(call: Call) -> set[str]:
    """The files with import errors in the whole environment (for a list of DAGs)."""
    return {err["filename"] for err in call.store.list_import_errors()}


def _has_import_errors(call: Call, meta: DagMeta) -> bool:
    """Whether one DAG's file has import errors: its own file's record, one read (not the environment's list)."""
    record = call.store.get_file_record(meta.relative_fileloc)
    return record is not None and any(err["filename"] == meta.relative_fileloc for err in record.import_errors)


def _params(params: dict[str, Any]) -> dict[str, Any]:
    """Each param as Airflow's API shows it: value (None when it has no default), description, schema, source."""
    # lazy: cold start (the API's build imports every route module; the SDK's params only here)
    from updraft.sdk.param import NOTSET

    out = {}
    for name, param in params.items():
        dumped = param.dump() if hasattr(param, "dump") else {"value": param}
        if dumped.get("value") is NOTSET:
            dumped["value"] = None
        out[name] = jsonable(dumped)
    return out


def _filtered_dags(call: Call) -> list[DagMeta]:
    """The DAG rows the list filters keep (Airflow's names; ``exclude_stale`` defaults to true)."""
    q = call.query
    matches_id = pattern_matcher(q.string("dag_id_pattern"))
    tags = set(q.strings("tags"))
    match_all = q.string("tags_match_mode") == "all"
    owners = set(q.strings("owners"))
    paused = q.boolean("paused")
    exclude_stale = q.boolean("exclude_stale", True)
    has_import_errors = q.boolean("has_import_errors")
    last_run_states = q.choices("last_dag_run_state", frozenset(DagRunState))
    q.check()
    metas = call.store.list_dags(include_inactive=not exclude_stale)
    metas = [m for m in metas if matches_id(m.dag_id) and (paused is None or m.is_paused == paused)]
    if tags:
        metas = [m for m in metas if (tags <= set(m.tags) if match_all else tags & set(m.tags))]
    if owners:
        metas = [m for m in metas if owners & {o.strip() for o in m.owners.split(",")}]
    if has_import_errors is not None:
        files = _import_error_files(call)
        metas = [m for m in metas if (m.relative_fileloc in files) == has_import_errors]
    if last_run_states:
        metas = [m for m in metas if _last_run_state(call, m.dag_id) in last_run_states]
    return metas


def _last_run_state(call: Call, dag_id: str) -> str | None:
    runs = call.store.list_runs(dag_id, limit=1)
    return runs[0].state.value if runs else None


def _dag_page(call: Call) -> tuple[list[DagMeta], int]:
    page = page_of(call.query, ["dag_id"])
    metas = _filtered_dags(call)
    return paginate(metas, page, DAG_ORDER)


def _responses(call: Call, metas: list[DagMeta]) -> list[DAGResponse]:
    files = _import_error_files(call)
    return [dag_response(call, m, call.store.get_serialized_dag(m.dag_id, m.dag_hash), m.relative_fileloc in files)
            for m in metas]


@routes.get("/dags")
def get_dags(call: Call) -> DAGCollectionResponse:
    metas, total = _dag_page(call)
    return {"dags": _responses(call, metas), "total_entries": total}


def _paused_from(call: Call) -> bool:
    mask = call.query.strings("update_mask")
    call.query.check()
    body = parse_body(call.request.body, PATCH_BODY)
    if mask and "is_paused" not in mask:
        raise BadRequest("Only `is_paused` field can be updated through the REST API")
    return body["is_paused"]


def _set_paused(call: Call, dag_id: str, paused: bool) -> None:
    # Unpausing recomputes a catchup=False DAG's next run from now, as the CLI's unpause does.
    # lazy: cold start (the API's build imports every route module; scheduling only on this route)
    from updraft.scheduling.commands import set_paused

    set_paused(call.store, dag_id, paused, now=None if paused else call.now())


@routes.patch("/dags")
def patch_dags(call: Call) -> DAGCollectionResponse:
    """Pause or unpause the DAGs the list filters select (this page of them), as Airflow's bulk PATCH."""
    paused = _paused_from(call)
    metas, total = _dag_page(call)
    for meta in metas:
        _set_paused(call, meta.dag_id, paused)
        meta.is_paused = paused
    return {"dags": _responses(call, metas), "total_entries": total}


@routes.get("/dags/{dag_id}")
def get_dag(call: Call) -> DAGResponse:
    meta, sdag = dag_or_404(call, call.path("dag_id"))
    return dag_response(call, meta, sdag, _has_import_errors(call, meta))


@routes.patch("/dags/{dag_id}")
def patch_dag(call: Call) -> DAGResponse:
    dag_id = call.path("dag_id")
    paused = _paused_from(call)
    dag_or_404(call, dag_id)
    _set_paused(call, dag_id, paused)
    return get_dag(call)


@routes.delete("/dags/{dag_id}")
def delete_dag(call: Call) -> Reply:
    """Airflow's ``DELETE /dags/{dag_id}`` (:mod:`updraft.scheduling.commands`): 204; 404 for an unknown DAG;
    409 while one of its task instances runs. A DAG whose file still defines it comes back, paused, the next time
    the file is parsed (its next upload), as it does on Airflow's next parse."""
    # lazy: cold start (the API's build imports every route module; scheduling only on this route)
    from updraft.scheduling.commands import delete_dag as delete

    dag_id = call.path("dag_id")
    if not delete(call.store, dag_id, waits=call.services.waits):
        raise NotFound(f"Dag with id: {dag_id} was not found")
    return Reply(204)


@routes.get("/dags/{dag_id}/details")
def get_dag_details(call: Call) -> DAGDetailsResponse:
    # lazy: cold start (the API's build imports every route module; scheduling only on this route)
    from updraft.scheduling import runs_holding

    meta, sdag = dag_or_404(call, call.path("dag_id"))
    return {
        **dag_response(call, meta, sdag, _has_import_errors(call, meta)),
        "catchup": bool(getattr(sdag, "catchup", False)),
        "dag_run_timeout": iso_duration(getattr(sdag, "dagrun_timeout", None)),
        "asset_expression": None,
        "doc_md": getattr(sdag, "doc_md", None),
        "start_date": iso(getattr(sdag, "start_date", None)), "end_date": iso(getattr(sdag, "end_date", None)),
        "is_paused_upon_creation": getattr(sdag, "is_paused_upon_creation", None),
        "params": _params(getattr(sdag, "params", {}) or {}),
        "render_template_as_native_obj": bool(getattr(sdag, "render_template_as_native_obj", False)),
        "template_search_path": list(getattr(sdag, "template_searchpath", []) or []) or None,
        "timezone": getattr(sdag, "timezone", "UTC"),
        "last_parsed": None,
        "default_args": jsonable(getattr(sdag, "default_args", {}) or {}),
        "rerun_with_latest_version": None,
        "owner_links": dict(getattr(sdag, "owner_links", {}) or {}),
        "is_favorite": False,
        "active_runs_count": runs_holding(call.store, dag_runs_limit(meta.dag_id)),
        "concurrency": meta.max_active_tasks,
        "latest_dag_version": None,
    }


def task_response(task: Any) -> TaskResponse:
    return {
        "task_id": task.task_id, "task_display_name": task.task_display_name or task.task_id,
        "owner": task.owner, "start_date": iso(task.start_date), "end_date": iso(task.end_date),
        "trigger_rule": task.trigger_rule, "depends_on_past": task.depends_on_past,
        "wait_for_downstream": task.wait_for_downstream, "retries": task.retries, "queue": task.queue,
        "pool": task.pool, "pool_slots": task.pool_slots,
        "execution_timeout": time_delta(task.execution_timeout), "retry_delay": time_delta(task.retry_delay),
        "retry_exponential_backoff": float(task.retry_exponential_backoff),
        "priority_weight": task.priority_weight, "weight_rule": task.weight_rule,
        "ui_color": task.ui_color, "ui_fgcolor": task.ui_fgcolor,
        "template_fields": list(task.template_fields), "downstream_task_ids": list(task.downstream_task_ids),
        "doc_md": task.doc_md, "operator_name": task.custom_operator_name or task.task_type,
        "params": _params(task.params or {}),
        "class_ref": {"module_path": task.operator_module, "class_name": task.task_type},
        # A task of a mapped task group has map indexes but is not a mapped operator (Airflow's is_mapped).
        "is_mapped": task.is_mapped and task.map_group_id is None, "extra_links": sorted(task.extra_links or ()),
    }


TASK_ORDER = field_keys("task_id", "task_display_name", "owner", "start_date", "end_date", "trigger_rule",
                        "retries", "queue", "pool", "pool_slots", "priority_weight", "weight_rule",
                        "operator_name", "is_mapped")


@routes.get("/dags/{dag_id}/tasks")
def get_tasks(call: Call) -> TaskCollectionResponse:
    order_by = call.query.strings("order_by", ["task_id"])
    _meta, sdag = dag_or_404(call, call.path("dag_id"))
    tasks = order([task_response(t) for t in getattr(sdag, "tasks", [])], order_by, TASK_ORDER)
    return {"tasks": tasks, "total_entries": len(tasks)}


@routes.get("/dags/{dag_id}/tasks/{task_id}")
def get_task(call: Call) -> TaskResponse:
    dag_id, task_id = call.path("dag_id"), call.path("task_id")
    _meta, sdag = dag_or_404(call, dag_id)
    task = next((t for t in getattr(sdag, "tasks", []) if t.task_id == task_id), None)
    if task is None:
        raise NotFound(f"Task with id {task_id} not found")
    return task_response(task)


@routes.get("/dagTags")
def get_dag_tags(call: Call) -> DAGTagCollectionResponse:
    page = page_of(call.query, ["name"])
    matches = pattern_matcher(call.query.string("tag_name_pattern"))
    call.query.check()
    names = sorted({tag for meta in call.store.list_dags() for tag in meta.tags if matches(tag)})
    tags, total = paginate(names, page, {"name": lambda name: name})
    return {"tags": tags, "total_entries": total}
