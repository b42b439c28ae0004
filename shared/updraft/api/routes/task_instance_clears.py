"""Clearing task instances: ``POST /dags/{dag_id}/clearTaskInstances`` (Airflow's ``ClearTaskInstancesBody``): the
named tasks (with their relatives) in one run or in the runs of a logical-date range are reset so they run again
(:mod:`updraft.scheduling.decisions.clearing`); ``dry_run``, the default, lists them without clearing. An
``ExternalTaskMarker`` cleared brings its external task and that task's downstream tasks into the clear
(:mod:`updraft.scheduling.commands.marker_clears`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from updraft.api.body import Field, parse_body
from updraft.api.changes import NOTE_LENGTH, nudge, refuse
from updraft.api.errors import BadRequest, Conflict, NotFound, Unprocessable, dag_not_found, issue
from updraft.api.lookups import dag_or_404
from updraft.api.routes.task_instances import run_dag, ti_response
from updraft.api.routing import Call, RouteTable
from updraft.model.records import DagRun, TaskInstance
from updraft.model.states import TaskInstanceState

if TYPE_CHECKING:
    from updraft.api.models import TaskInstanceCollectionResponse

routes = RouteTable()

CLEAR_BODY = {
    "dry_run": Field("bool", nullable=False), "start_date": Field("datetime"), "end_date": Field("datetime"),
    "only_failed": Field("bool", nullable=False), "only_running": Field("bool", nullable=False),
    "reset_dag_runs": Field("bool", nullable=False), "task_ids": Field("list"), "dag_run_id": Field("str"),
    "include_upstream": Field("bool", nullable=False), "include_downstream": Field("bool", nullable=False),
    "include_future": Field("bool", nullable=False), "include_past": Field("bool", nullable=False),
    "run_on_latest_version": Field("bool"), "prevent_running_task": Field("bool", nullable=False),
    "note": Field("str", max_length=NOTE_LENGTH),
}
UNSUPPORTED_CLEAR = {"run_on_latest_version": "a cleared run reruns on the DAG version it started with"}


def _clear_body(call: Call) -> dict[str, Any]:
    """Airflow's ``ClearTaskInstancesBody``: its defaults (``dry_run`` and ``only_failed`` true) and checks."""
    body = {"dry_run": True, "only_failed": True, "reset_dag_runs": True, **parse_body(call.request.body, CLEAR_BODY)}

    def invalid(message: str) -> Unprocessable:
        return Unprocessable([issue("value_error", ("body",), f"Value error, {message}",
                                    json.loads(call.request.body or "{}"))])

    if body["only_failed"] and body.get("only_running"):
        raise invalid("only_failed and only_running both are set to True")
    start, end = body.get("start_date"), body.get("end_date")
    if start and end and start > end:
        raise invalid("end_date is sooner than start_date")
    if (start or end) and body.get("dag_run_id"):
        raise invalid("Exactly one of dag_run_id or (start_date and end_date) must be provided")
    task_ids = body.get("task_ids")
    if task_ids is not None:
        if not task_ids:
            raise invalid("task_ids list should have at least 1 element.")
        for marker in task_ids:
            if not (isinstance(marker, str) or (isinstance(marker, list) and len(marker) == 2
                                                and isinstance(marker[0], str) and isinstance(marker[1], int))):
                raise Unprocessable([issue("string_type", ("body", "task_ids"), "Input should be a valid string",
                                           marker)])
    refuse(body, UNSUPPORTED_CLEAR)
    return body


@routes.post("/dags/{dag_id}/clearTaskInstances")
def post_clear_task_instances(call: Call) -> TaskInstanceCollectionResponse:
    """Clear the named task instances (with their relatives) in one run, or in the runs whose logical date is in
    [start_date, end_date]; ``dry_run`` (the default) lists them without clearing."""
    # lazy: cold start (the API's build imports every route module; scheduling only here)
    from updraft.scheduling.commands import apply_resets
    from updraft.scheduling.decisions import Selection, resets, to_clear, with_relatives

    dag_id = call.path("dag_id")
    body = _clear_body(call)
    _meta, latest = dag_or_404(call, dag_id)
    past, future = bool(body.get("include_past")), bool(body.get("include_future"))
    start, end = body.get("start_date"), body.get("end_date")
    run_id = body.get("dag_run_id")
    named: list[DagRun] = []  # the run the body names
    if run_id is not None:
        run = call.store.get_run(dag_id, run_id)
        if run is None:
            raise NotFound(f"Dag Run id {run_id} not found in dag {dag_id}")
        if (past or future) and run.logical_date is None:
            raise BadRequest("Cannot use include_past or include_future with no logical_date(e.g. manually or "
                             "asset-triggered).")
        start = end = run.logical_date
        named = [run]
    if past:
        start = None
    if future:
        end = None
    runs = _runs_between(call, dag_id, start, end) if run_id is None or past or future else named
    markers = body.get("task_ids")
    selection = Selection() if markers is None else Selection(
        frozenset(m for m in markers if isinstance(m, str)), frozenset((m[0], m[1]) for m in markers
                                                                       if isinstance(m, list)))
    if latest is None:  # the DAG's row names a version the store no longer has: nothing to select tasks from
        raise dag_not_found(dag_id)
    selection = with_relatives(latest, selection, upstream=bool(body.get("include_upstream")),
                               downstream=bool(body.get("include_downstream")))
    found = []
    for run in runs:
        sdag = run_dag(call, run)
        chosen = to_clear(call.store.get_run_tis(dag_id, run.run_id), selection,
                          only_failed=bool(body["only_failed"]), only_running=bool(body.get("only_running")))
        if chosen:
            found.append((run, sdag, chosen))
    found += _dependent(call, found, only_failed=bool(body["only_failed"]), only_running=bool(body.get("only_running")))
    if body["dry_run"]:
        return _cleared(found, {})
    if body.get("prevent_running_task") and any(ti.state == TaskInstanceState.RUNNING
                                                for _, _, chosen in found for ti in chosen):
        raise Conflict("AirflowClearRunningTaskException: Disable 'prevent_running_task' to proceed, or wait until "
                       "the task is not running, queued, or scheduled state.")
    current = {}
    for run, sdag, chosen in found:
        apply_resets(call.store, run, resets(sdag, chosen, note=body.get("note")), now=call.now(),
                     reset_dag_runs=bool(body["reset_dag_runs"]), waits=call.services.waits)
        current.update({ti.key: ti for ti in call.store.get_run_tis(run.dag_id, run.run_id)})
    for changed_dag in sorted({run.dag_id for run, _, _ in found}):
        nudge(call, changed_dag, [run.run_id for run, _, _ in found if run.dag_id == changed_dag])
    return _cleared(found, current)


def _dependent(call: Call, found: list[tuple[Any, Any, list[TaskInstance]]], *, only_failed: bool,
               only_running: bool) -> list[tuple[Any, Any, list[TaskInstance]]]:
    """The other DAGs' instances the clear takes through the ExternalTaskMarkers it clears
    (:mod:`updraft.scheduling.commands.marker_clears`); past the markers' recursion depth, a 400 naming the marker."""
    # lazy: cold start (the API's build imports every route module; scheduling only here)
    from updraft.scheduling.commands import dependent_clears

    taken: dict[tuple[str, str], tuple[Any, Any, dict[Any, TaskInstance]]] = {}
    for run, sdag, chosen in found:
        for clear in dependent_clears(call.store, sdag, run, chosen, only_failed=only_failed,
                                      only_running=only_running):
            entry = taken.setdefault((clear.run.dag_id, clear.run.run_id), (clear.run, clear.dag, {}))
            entry[2].update({ti.key: ti for ti in clear.tis})
    own = {ti.key for _, _, chosen in found for ti in chosen}
    return [(run, sdag, [ti for key, ti in tis.items() if key not in own]) for run, sdag, tis in taken.values()
            if set(tis) - own]


def _cleared(found: list[tuple[DagRun, Any, list[TaskInstance]]], current: dict[Any, TaskInstance]
             ) -> TaskInstanceCollectionResponse:
    """The instances a clear took, as they are now (``current``) or, for a dry run, as they were read."""
    responses = [ti_response(current.get(ti.key, ti), run, sdag) for run, sdag, chosen in found for ti in chosen]
    return {"task_instances": responses, "total_entries": len(responses)}


def _runs_between(call: Call, dag_id: str, start: Any, end: Any) -> list[DagRun]:
    """The DAG's runs whose logical date is in [start, end] (either open); a run without one only when neither
    bound is given, as Airflow's date filter leaves it out."""
    runs = call.store.list_runs(dag_id)
    if start is None and end is None:
        return runs
    return [r for r in runs if r.logical_date is not None and (start is None or r.logical_date >= start)
            and (end is None or r.logical_date <= end)]
