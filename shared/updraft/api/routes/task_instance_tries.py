"""A task instance's tries (``.../taskInstances/{task_id}/tries``, one by number, and the mapped forms), as
Airflow's ``TaskInstanceHistoryResponse``.

Updraft records a try when a retry or a clear supersedes it (``TRY#`` items beside the instance); the listing is
those records and then the instance itself, as Airflow lists its history rows and then the task instance. As in
Airflow, an instance waiting for its retry is left out once that try is recorded (the record is the same try).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from updraft.api.errors import NotFound
from updraft.api.lookups import dag_or_404, run_or_404
from updraft.api.routes.task_instances import run_instances, ti_response
from updraft.api.routing import Call, RouteTable
from updraft.model.records import UNMAPPED, DagRun, TaskInstance, TIKey
from updraft.model.states import TaskInstanceState

if TYPE_CHECKING:
    from updraft.api.models import TaskInstanceHistoryCollectionResponse, TaskInstanceHistoryResponse

routes = RouteTable()

def _tries(call: Call, map_index: int) -> tuple[list[TaskInstance], DagRun, Any]:
    """The instance's recorded tries and then the instance (unless it is the recorded try waiting to retry)."""
    dag_id, run_id, task_id = call.path("dag_id"), call.path("dag_run_id"), call.path("task_id")
    dag_or_404(call, dag_id)
    run = run_or_404(call, dag_id, run_id)
    sdag = call.store.get_serialized_dag(dag_id, run.dag_hash)
    key = TIKey(dag_id, run_id, task_id, map_index)
    recorded = call.store.get_tries(key)
    numbers = {ti.try_number for ti in recorded}
    current = next((ti for ti in run_instances(call, run, sdag) if ti.key == key), None)
    tries = list(recorded)
    if current is not None and not (current.state == TaskInstanceState.UP_FOR_RETRY
                                    and current.try_number in numbers):
        tries.append(current)
    if not tries:
        raise NotFound(f"The Task Instance with dag_id: `{dag_id}`, run_id: `{run_id}`, task_id: `{task_id}` and "
                       f"map_index: `{map_index}` was not found")
    return tries, run, sdag


def history_response(ti: TaskInstance, run: DagRun, sdag: Any) -> TaskInstanceHistoryResponse:
    """The try as its task instance response shows it, without the instance's own fields (id, dates of the run,
    note, rendered fields, trigger)."""
    r = ti_response(ti, run, sdag)
    return {
        "task_id": r["task_id"], "dag_id": r["dag_id"], "dag_run_id": r["dag_run_id"], "map_index": r["map_index"],
        "start_date": r["start_date"], "end_date": r["end_date"], "duration": r["duration"], "state": r["state"],
        "try_number": r["try_number"], "max_tries": r["max_tries"], "task_display_name": r["task_display_name"],
        "dag_display_name": r["dag_display_name"], "hostname": r["hostname"], "unixname": r["unixname"],
        "pool": r["pool"], "pool_slots": r["pool_slots"], "queue": r["queue"], "priority_weight": r["priority_weight"],
        "operator": r["operator"], "operator_name": r["operator_name"], "queued_when": r["queued_when"],
        "scheduled_when": r["scheduled_when"], "pid": r["pid"], "executor": r["executor"],
        "executor_config": r["executor_config"], "dag_version": r["dag_version"],
    }


def _listed(call: Call, map_index: int) -> TaskInstanceHistoryCollectionResponse:
    tries, run, sdag = _tries(call, map_index)
    return {"task_instances": [history_response(ti, run, sdag) for ti in tries], "total_entries": len(tries)}


def _one(call: Call, map_index: int) -> TaskInstanceHistoryResponse:
    """The try with that number: the instance first (Airflow reads the task instance before its history)."""
    number = call.int_path("task_try_number")
    tries, run, sdag = _tries(call, map_index)
    found = next((ti for ti in reversed(tries) if ti.try_number == number), None)
    if found is None:
        raise NotFound(f"The Task Instance with dag_id: `{run.dag_id}`, run_id: `{run.run_id}`, task_id: "
                       f"`{call.path('task_id')}`, try_number: `{number}` and map_index: `{map_index}` was not found")
    return history_response(found, run, sdag)


def _query_map_index(call: Call) -> int:
    map_index = call.query.integer("map_index", UNMAPPED)
    call.query.check()
    return map_index


@routes.get("/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/tries")
def get_task_instance_tries(call: Call) -> TaskInstanceHistoryCollectionResponse:
    return _listed(call, _query_map_index(call))


@routes.get("/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/{map_index}/tries")
def get_mapped_task_instance_tries(call: Call) -> TaskInstanceHistoryCollectionResponse:
    return _listed(call, call.int_path("map_index"))


@routes.get("/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/tries/{task_try_number}")
def get_task_instance_try_details(call: Call) -> TaskInstanceHistoryResponse:
    return _one(call, _query_map_index(call))


@routes.get("/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/{map_index}/tries/{task_try_number}")
def get_mapped_task_instance_try_details(call: Call) -> TaskInstanceHistoryResponse:
    return _one(call, call.int_path("map_index"))
