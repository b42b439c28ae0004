"""A task instance's tries (``.../taskInstances/{task_id}/tries``, one by number, and the mapped forms), as
Airflow's ``TaskInstanceHistoryResponse``.

Updraft records a try when a retry or a clear supersedes it (``TRY#`` items beside the instance); the listing is
those records and then the instance itself, as Airflow lists its history rows and then the task instance. As in
Airflow, an instance waiting for its retry is left out once that try is recorded (the record is the same try).
"""

from __future__ import annotations

from typing import Any

from updraft.api.errors import NotFound
from updraft.api.lookups import dag_or_404, run_or_404
from updraft.api.routes.task_instances import run_instances, ti_response
from updraft.api.routing import Call, RouteTable
from updraft.model.records import UNMAPPED, TaskInstance, TIKey
from updraft.model.states import TaskInstanceState

routes = RouteTable()

# TaskInstanceResponse fields that TaskInstanceHistoryResponse does not have.
_NOT_IN_HISTORY = ("id", "logical_date", "run_after", "note", "rendered_map_index", "rendered_fields", "trigger",
                   "triggerer_job")


def _tries(call: Call, map_index: int) -> tuple[list[TaskInstance], Any, Any]:
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


def history_response(ti: TaskInstance, run: Any, sdag: Any) -> dict[str, Any]:
    response = ti_response(ti, run, sdag)
    for name in _NOT_IN_HISTORY:
        response.pop(name, None)
    return response


def _listed(call: Call, map_index: int) -> dict[str, Any]:
    tries, run, sdag = _tries(call, map_index)
    return {"task_instances": [history_response(ti, run, sdag) for ti in tries], "total_entries": len(tries)}


def _one(call: Call, map_index: int) -> dict[str, Any]:
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
def get_task_instance_tries(call: Call) -> dict[str, Any]:
    return _listed(call, _query_map_index(call))


@routes.get("/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/{map_index}/tries")
def get_mapped_task_instance_tries(call: Call) -> dict[str, Any]:
    return _listed(call, call.int_path("map_index"))


@routes.get("/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/tries/{task_try_number}")
def get_task_instance_try_details(call: Call) -> dict[str, Any]:
    return _one(call, _query_map_index(call))


@routes.get("/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/{map_index}/tries/{task_try_number}")
def get_mapped_task_instance_try_details(call: Call) -> dict[str, Any]:
    return _one(call, call.int_path("map_index"))
