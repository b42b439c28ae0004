"""Marking task instances: ``PATCH .../taskInstances/{task_id}[/{map_index}]`` and its ``dry_run``, as Airflow's
``patch_task_instance``, answering ``TaskInstanceCollectionResponse``.

A mark (:mod:`updraft.scheduling.decisions`) sets the instance (and its relatives, runs before/after when asked) to
success, failed or skipped, fenced on the try it read, releasing what a running try held; then, as Airflow does,
the failed and upstream-failed instances downstream of the marked task are cleared so the run can go on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from updraft.api.body import Field, parse_body
from updraft.api.changes import NOTE_LENGTH, nudge
from updraft.api.errors import Conflict, NotFound, Unprocessable, issue
from updraft.api.lookups import dag_or_404, run_or_404
from updraft.api.routes.task_instances import run_dag, run_instances, ti_response
from updraft.api.routing import Call, RouteTable
from updraft.model.records import DagRun, TaskInstance
from updraft.model.states import MARKABLE_TI_STATES, TaskInstanceState

if TYPE_CHECKING:
    from updraft.api.models import TaskInstanceCollectionResponse

routes = RouteTable()

PATCH_BODY = {"new_state": Field("str"), "note": Field("str", max_length=NOTE_LENGTH),
              "include_upstream": Field("bool", nullable=False), "include_downstream": Field("bool", nullable=False),
              "include_future": Field("bool", nullable=False), "include_past": Field("bool", nullable=False)}


def _patch_body(call: Call) -> dict[str, Any]:
    """The body's fields to apply (those sent, or named in ``update_mask``), checked as Airflow's
    ``PatchTaskInstanceBody``."""
    mask = set(call.query.strings("update_mask"))
    call.query.check()
    body = parse_body(call.request.body, PATCH_BODY)
    if "new_state" in body:
        new_state = body["new_state"]
        if new_state is None:
            raise Unprocessable([issue("value_error", ("body", "new_state"),
                                       "Value error, 'new_state' should not be empty", None)])
        body["new_state"] = new_state.lower()
        if body["new_state"] not in MARKABLE_TI_STATES:
            raise Unprocessable([issue("value_error", ("body", "new_state"),
                                       f"Value error, '{body['new_state']}' is not one of "
                                       f"{[s.value for s in MARKABLE_TI_STATES]}",
                                       new_state)])
    applied = {k: v for k, v in body.items() if k in mask} if mask else dict(body)
    return {**applied, **{k: v for k, v in body.items() if k.startswith("include_")}}


def _patched(call: Call, map_index: int | None, *, dry_run: bool) -> TaskInstanceCollectionResponse:
    """Airflow's ``patch_task_instance`` (and its ``dry_run``): note first, then the state, over the run's
    instances of the task (one map index, or all of them)."""
    # lazy: cold start (the API's build imports every route module; scheduling only here)
    from updraft.scheduling.decisions import marked_selection, runs_in_range

    dag_id, run_id, task_id = call.path("dag_id"), call.path("dag_run_id"), call.path("task_id")
    body = _patch_body(call)
    _meta, latest = dag_or_404(call, dag_id)
    run = run_or_404(call, dag_id, run_id)
    sdag = run_dag(call, run)
    if task_id not in getattr(sdag, "task_dict", {}) or task_id not in getattr(latest, "task_dict", {}):
        raise NotFound(f"Task '{task_id}' not found in Dag '{dag_id}'")
    mine = [ti for ti in run_instances(call, run, sdag)
            if ti.task_id == task_id and (map_index is None or ti.map_index == map_index)]
    if not mine:
        raise NotFound(f"The Task Instance with dag_id: `{dag_id}`, run_id: `{run_id}`, task_id: `{task_id}` "
                       f"and map_index: `{map_index}` was not found")
    past, future = bool(body.get("include_past")), bool(body.get("include_future"))
    runs = runs_in_range(call.store.list_runs(dag_id) if past or future else [run], run, past=past, future=future)
    now = call.now()
    if dry_run:
        if not body.get("new_state"):
            return _collection(mine, run, sdag)
        state = TaskInstanceState(body["new_state"])
        selection = marked_selection(sdag, task_id, map_index, upstream=bool(body.get("include_upstream")),
                                     downstream=bool(body.get("include_downstream")))
        found = []
        for other in runs:
            other_sdag = run_dag(call, other)
            found += [(ti, other, other_sdag) for ti in run_instances(call, other, other_sdag)
                      if selection.matches(ti) and ti.state != state]
        return {"task_instances": [ti_response(ti, r, d) for ti, r, d in found], "total_entries": len(found)}
    if "note" in body:
        for ti in mine:
            call.store.set_ti_note(ti.key, body["note"])
    if body.get("new_state"):
        _mark(call, sdag, runs, task_id, map_index, TaskInstanceState(body["new_state"]), body, now)
    fresh = [ti for ti in run_instances(call, run, sdag)
             if ti.task_id == task_id and (map_index is None or ti.map_index == map_index)]
    return _collection(fresh, run, sdag)


def _mark(call: Call, sdag: Any, runs: list[DagRun], task_id: str, map_index: int | None, state: Any,
          body: dict[str, Any], now: Any) -> None:
    # lazy: cold start (the API's build imports every route module; scheduling only here)
    from updraft.scheduling.commands import apply_marks, apply_resets
    from updraft.scheduling.decisions import Selection, marked_selection, relatives, resets, task_marks, to_clear

    selection = marked_selection(sdag, task_id, map_index, upstream=bool(body.get("include_upstream")),
                                 downstream=bool(body.get("include_downstream")))
    applied = []
    for run in runs:
        run_sdag = run_dag(call, run)
        tis = run_instances(call, run, run_sdag)
        applied += apply_marks(call.store, task_marks(tis, selection, state, now=now),
                               before={ti.key: ti for ti in tis}, waits=call.services.waits)
    if not applied:
        raise Conflict(f"Task id {task_id} is already in {state.value} state")
    # As Airflow: the failed downstream of the marked task is cleared, so the run can go on from the mark.
    downstream = Selection(frozenset(relatives(sdag, [task_id], upstream=False)))
    for run in runs:
        run_sdag = run_dag(call, run)
        chosen = to_clear(call.store.get_run_tis(run.dag_id, run.run_id), downstream, only_failed=True)
        apply_resets(call.store, run, resets(run_sdag, chosen), now=now, waits=call.services.waits)
    nudge(call, runs[0].dag_id, [r.run_id for r in runs])


def _collection(tis: list[TaskInstance], run: DagRun, sdag: Any) -> TaskInstanceCollectionResponse:
    return {"task_instances": [ti_response(ti, run, sdag) for ti in tis], "total_entries": len(tis)}


# The dry-run routes first: ``.../{task_id}/dry_run`` would otherwise be taken for a map index.
@routes.patch("/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/dry_run")
def patch_task_instance_dry_run(call: Call) -> TaskInstanceCollectionResponse:
    return _patched(call, None, dry_run=True)


@routes.patch("/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/{map_index}/dry_run")
def patch_task_instance_dry_run_by_map_index(call: Call) -> TaskInstanceCollectionResponse:
    return _patched(call, call.int_path("map_index"), dry_run=True)


@routes.patch("/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}")
def patch_task_instance(call: Call) -> TaskInstanceCollectionResponse:
    return _patched(call, None, dry_run=False)


@routes.patch("/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/{map_index}")
def patch_task_instance_by_map_index(call: Call) -> TaskInstanceCollectionResponse:
    return _patched(call, call.int_path("map_index"), dry_run=False)
