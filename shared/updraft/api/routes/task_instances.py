"""Task instances of a run: list (``~`` for every run of a DAG, or of every DAG) and get, as Airflow's
``TaskInstanceResponse`` (marks: ``task_instance_marks``; clears: ``task_instance_clears``).

Airflow creates a row for every task when a run is created; Updraft writes a task instance only once the
scheduler touches it. So a run's instances are its stored ones plus, for each task with none yet, the instance
Airflow would show: ``map_index`` -1, state null, try 0 (what ``updraft tasks states`` lists too).
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from updraft.api.deferrals import trigger_response
from updraft.api.errors import NotFound
from updraft.api.filters import date_bounds, range_checks
from updraft.api.formats import iso, pattern_matcher, seconds_between
from updraft.api.lookups import WILDCARD, dag_or_404, display_name, field_keys, run_after, run_or_404
from updraft.api.pagination import page_of, paginate
from updraft.api.routing import Call, RouteTable
from updraft.model.records import UNMAPPED, DagRun, TaskInstance
from updraft.model.states import API_TI_STATES

if TYPE_CHECKING:
    from updraft.api.models import TaskInstanceCollectionResponse, TaskInstanceResponse

routes = RouteTable()

_ID_NAMESPACE = uuid.UUID("5f0f3c2e-8d0a-4a57-9e57-6b1d1c6d2a01")
NO_STATUS = "no_status"  # Airflow's query value for a null state
TI_STATES = frozenset({*API_TI_STATES, NO_STATUS})  # the ``state`` filter's values
TI_ORDER = field_keys("id", "task_id", "dag_id", "dag_run_id", "map_index", "state", "start_date", "end_date",
                      "duration", "try_number", "max_tries", "pool", "pool_slots", "queue", "priority_weight",
                      "operator", "executor", "logical_date", "run_after", "task_display_name", "hostname",
                      "queued_when", aliases={"run_id": "dag_run_id", "queued_dttm": "queued_when"})


def ti_id(ti: TaskInstance) -> str:
    """Airflow's TI id is a UUID; Updraft's instance is named by its key, so the id is derived from the key."""
    return str(uuid.uuid5(_ID_NAMESPACE, "\x1f".join((ti.dag_id, ti.run_id, ti.task_id, str(ti.map_index)))))


def ti_response(ti: TaskInstance, run: DagRun, sdag: Any) -> TaskInstanceResponse:
    task = getattr(sdag, "task_dict", {}).get(ti.task_id)
    return {
        "id": ti_id(ti), "task_id": ti.task_id, "dag_id": ti.dag_id, "dag_run_id": ti.run_id,
        "map_index": ti.map_index, "logical_date": iso(run.logical_date),
        "run_after": iso(run_after(run)),
        "start_date": iso(ti.start_date), "end_date": iso(ti.end_date),
        "duration": seconds_between(ti.start_date, ti.end_date),
        "state": ti.state.value if ti.state else None, "try_number": ti.try_number,
        "max_tries": ti.max_tries if ti.max_tries is not None else (task.retries if task is not None else 0),
        "task_display_name": (task.task_display_name if task is not None else None) or ti.task_id,
        "dag_display_name": display_name(sdag, ti.dag_id),
        "hostname": ti.hostname, "unixname": None, "pool": ti.pool, "pool_slots": ti.pool_slots,
        "queue": task.queue if task is not None else None, "priority_weight": ti.priority_weight,
        "operator": task.task_type if task is not None else None,
        "operator_name": (task.custom_operator_name or task.task_type) if task is not None else None,
        "queued_when": iso(ti.queued_at), "scheduled_when": None, "pid": None,
        "executor": ti.executor, "executor_config": str(task.executor_config or {}) if task is not None else "{}",
        "note": ti.note, "rendered_map_index": None, "rendered_fields": ti.rendered_fields or {},
        "trigger": trigger_response(ti), "triggerer_job": None, "dag_version": None,
    }


def _untouched(run: DagRun, task: Any) -> TaskInstance:
    return TaskInstance(dag_id=run.dag_id, run_id=run.run_id, task_id=task.task_id, pool=task.pool,
                        pool_slots=task.pool_slots, priority_weight=task.effective_priority_weight,
                        executor=task.executor or "lambda")


def run_instances(call: Call, run: DagRun, sdag: Any) -> list[TaskInstance]:
    """The run's stored instances plus one untouched instance per task that has none yet."""
    stored = call.store.get_run_tis(run.dag_id, run.run_id)
    touched = {ti.task_id for ti in stored}
    return stored + [_untouched(run, t) for t in getattr(sdag, "tasks", []) if t.task_id not in touched]


def runs_of(call: Call, dag_id: str, run_id: str) -> list[DagRun]:
    """The runs a path names: one, every run of one DAG (``run_id`` ``~``), or of every DAG (both ``~``)."""
    if dag_id == WILDCARD:
        if run_id != WILDCARD:
            raise NotFound("dag_id ~ (every DAG) needs dag_run_id ~ too")
        metas = call.store.list_dags(include_inactive=True)
        return [run for meta in metas for run in call.store.list_runs(meta.dag_id)]
    dag_or_404(call, dag_id)
    if run_id == WILDCARD:
        return call.store.list_runs(dag_id)
    return [run_or_404(call, dag_id, run_id)]


def run_dag(call: Call, run: DagRun) -> Any:
    """The DAG version the run is pinned to."""
    return call.store.get_serialized_dag(run.dag_id, run.dag_hash)


def _listed(call: Call, task_id: str | None = None) -> TaskInstanceCollectionResponse:
    """The list routes' filters, order and page over the instances of the path's runs (of one task if given)."""
    q = call.query
    page = page_of(q, ["map_index"])
    task_ids = {task_id} if task_id is not None else set(q.strings("task_id"))
    states = set(q.choices("state", TI_STATES))
    pools, queues, executors = set(q.strings("pool")), set(q.strings("queue")), set(q.strings("executor"))
    try_numbers = {q.integer("try_number")} - {None}
    map_indexes = {q.integer("map_index")} - {None}
    matches_name = pattern_matcher(q.string("task_display_name_pattern"))
    dates = range_checks(date_bounds(q, ("logical_date", "run_after", "start_date", "end_date")))
    q.check()
    responses = []
    for run in runs_of(call, call.path("dag_id"), call.path("dag_run_id")):
        sdag = run_dag(call, run)
        responses += [ti_response(ti, run, sdag) for ti in run_instances(call, run, sdag)]
    wanted = [r for r in responses
              if (not task_ids or r["task_id"] in task_ids)
              and (not states or (r["state"] or NO_STATUS) in states)
              and (not pools or r["pool"] in pools) and (not queues or r["queue"] in queues)
              and (not executors or r["executor"] in executors)
              and (not try_numbers or r["try_number"] in try_numbers)
              and (not map_indexes or r["map_index"] in map_indexes)
              and matches_name(r["task_display_name"]) and all(check(r) for check in dates)]
    found, total = paginate(wanted, page, TI_ORDER)
    return {"task_instances": found, "total_entries": total}


@routes.get("/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances")
def get_task_instances(call: Call) -> TaskInstanceCollectionResponse:
    return _listed(call)


@routes.get("/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/listMapped")
def get_mapped_task_instances(call: Call) -> TaskInstanceCollectionResponse:
    """Every map index of a mapped task in one run (paged and filtered as the list)."""
    dag_id, task_id = call.path("dag_id"), call.path("task_id")
    _meta, sdag = dag_or_404(call, dag_id)
    task = getattr(sdag, "task_dict", {}).get(task_id)
    if task is None:
        raise NotFound(f"Task id {task_id} not found")
    if not task.is_mapped:
        raise NotFound(f"Task id {task_id} is not mapped")
    return _listed(call, task_id)


def one_instance(call: Call, map_index: int) -> TaskInstanceResponse:
    """The response of one task instance of the path's run, or Airflow's 404."""
    dag_id, run_id, task_id = call.path("dag_id"), call.path("dag_run_id"), call.path("task_id")
    dag_or_404(call, dag_id)
    run = run_or_404(call, dag_id, run_id)
    sdag = run_dag(call, run)
    instances = [ti for ti in run_instances(call, run, sdag) if ti.task_id == task_id]
    found = next((ti for ti in instances if ti.map_index == map_index), None)
    if found is None:
        if map_index == UNMAPPED and instances:
            raise NotFound("Task instance is mapped, add the map_index value to the URL")
        raise NotFound(f"The Task Instance with dag_id: `{dag_id}`, run_id: `{run_id}`, task_id: `{task_id}` "
                       f"and map_index: `{map_index}` was not found")
    return ti_response(found, run, sdag)


@routes.get("/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}")
def get_task_instance(call: Call) -> TaskInstanceResponse:
    return one_instance(call, UNMAPPED)


@routes.get("/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/{map_index}")
def get_mapped_task_instance(call: Call) -> TaskInstanceResponse:
    return one_instance(call, call.int_path("map_index"))
