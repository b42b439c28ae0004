"""``GET .../taskInstances/{task_id}/dependencies`` (also ``.../{task_id}/{map_index}/dependencies``): what keeps
an instance from being queued, as Airflow's "Dependencies Blocking Task From Getting Scheduled".

The answer is :func:`updraft.scheduling.commands.why_not_running`'s (the CLI's ``tasks why``): the limit that last
refused a scheduled instance, or its dependencies evaluated live from the serialized DAG; empty when nothing
blocks it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from updraft.api.lookups import dag_or_404
from updraft.api.routing import Call, RouteTable
from updraft.model.records import UNMAPPED

if TYPE_CHECKING:
    from updraft.api.models import TaskDependencyCollectionResponse

routes = RouteTable()

INSTANCE = "/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}"


def _dependencies(call: Call, map_index: int) -> TaskDependencyCollectionResponse:
    # lazy: cold start (the API's build imports every route module; scheduling only here)
    from updraft.scheduling.commands import why_not_running

    dag_id = call.path("dag_id")
    dag_or_404(call, dag_id)
    reasons = why_not_running(call.store, dag_id, call.path("dag_run_id"), call.path("task_id"), map_index,
                                  now=call.now())
    return {"dependencies": [{"name": r.dep or r.kind.value, "reason": r.message} for r in reasons]}


@routes.get(INSTANCE + "/dependencies")
def get_task_instance_dependencies(call: Call) -> TaskDependencyCollectionResponse:
    map_index = call.query.integer("map_index", UNMAPPED)
    call.query.check()
    return _dependencies(call, map_index)


@routes.get(INSTANCE + "/{map_index}/dependencies")
def get_mapped_task_instance_dependencies(call: Call) -> TaskDependencyCollectionResponse:
    return _dependencies(call, call.int_path("map_index"))
