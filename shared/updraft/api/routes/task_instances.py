"""Task instances of a run: list (``~`` for every run of a DAG, or of every DAG), get, patch (mark a state, set a
note) and clear (``POST /dags/{dag_id}/clearTaskInstances``), as Airflow's ``TaskInstanceResponse``.

Airflow creates a row for every task when a run is created; Updraft writes a task instance only once the
scheduler touches it. So a run's instances are its stored ones plus, for each task with none yet, the instance
Airflow would show: ``map_index`` -1, state null, try 0 (what ``updraft tasks states`` lists too).

A mark (:mod:`updraft.scheduling.marking`) sets the instance (and its relatives, runs before/after when asked) to
success, failed or skipped, fenced on the try it read, releasing what a running try held; then, as Airflow does,
the failed and upstream-failed instances downstream of the marked task are cleared so the run can go on. A clear
(:mod:`updraft.scheduling.clearing`) resets the instances so they run again (``dry_run``, the default, lists them).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from updraft.api.body import Field, parse_body
from updraft.api.changes import NOTE_LENGTH, nudge, refuse
from updraft.api.errors import BadRequest, Conflict, NotFound, Unprocessable, issue
from updraft.api.filters import date_bounds, range_checks
from updraft.api.formats import iso, pattern_matcher, seconds_between
from updraft.api.lookups import WILDCARD, dag_or_404, display_name, field_keys, run_or_404
from updraft.api.pagination import page_of, paginate
from updraft.api.routing import Call, RouteTable
from updraft.model.records import UNMAPPED, TaskInstance

routes = RouteTable()

_ID_NAMESPACE = uuid.UUID("5f0f3c2e-8d0a-4a57-9e57-6b1d1c6d2a01")
NO_STATUS = "no_status"  # Airflow's query value for a null state
TI_STATES = frozenset({"removed", "scheduled", "queued", "running", "success", "restarting", "failed",
                       "up_for_retry", "up_for_reschedule", "upstream_failed", "skipped", "deferred",
                       "awaiting_input", NO_STATUS})
TI_ORDER = field_keys("id", "task_id", "dag_id", "dag_run_id", "map_index", "state", "start_date", "end_date",
                      "duration", "try_number", "max_tries", "pool", "pool_slots", "queue", "priority_weight",
                      "operator", "executor", "logical_date", "run_after", "task_display_name", "hostname",
                      "queued_when", aliases={"run_id": "dag_run_id", "queued_dttm": "queued_when"})


def ti_id(ti: TaskInstance) -> str:
    """Airflow's TI id is a UUID; Updraft's instance is named by its key, so the id is derived from the key."""
    return str(uuid.uuid5(_ID_NAMESPACE, "\x1f".join((ti.dag_id, ti.run_id, ti.task_id, str(ti.map_index)))))


def ti_response(ti: TaskInstance, run: Any, sdag: Any) -> dict[str, Any]:
    task = getattr(sdag, "task_dict", {}).get(ti.task_id)
    return {
        "id": ti_id(ti), "task_id": ti.task_id, "dag_id": ti.dag_id, "dag_run_id": ti.run_id,
        "map_index": ti.map_index, "logical_date": iso(run.logical_date),
        "run_after": iso(run.run_after or run.logical_date or run.queued_at),
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
        "note": ti.note, "rendered_map_index": None, "rendered_fields": {},
        "trigger": None, "triggerer_job": None, "dag_version": None,
    }


def _untouched(run: Any, task: Any) -> TaskInstance:
    return TaskInstance(dag_id=run.dag_id, run_id=run.run_id, task_id=task.task_id, pool=task.pool,
                        pool_slots=task.pool_slots, priority_weight=task.effective_priority_weight,
                        executor=task.executor or "lambda")


def run_instances(call: Call, run: Any, sdag: Any) -> list[TaskInstance]:
    """The run's stored instances plus one untouched instance per task that has none yet."""
    stored = call.store.get_run_tis(run.dag_id, run.run_id)
    touched = {ti.task_id for ti in stored}
    return stored + [_untouched(run, t) for t in getattr(sdag, "tasks", []) if t.task_id not in touched]


def runs_of(call: Call, dag_id: str, run_id: str) -> list[Any]:
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


def _sdag(call: Call, run: Any) -> Any:
    return call.store.get_serialized_dag(run.dag_id, run.dag_hash)


def _listed(call: Call, task_id: str | None = None) -> dict[str, Any]:
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
        sdag = _sdag(call, run)
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
def get_task_instances(call: Call) -> dict[str, Any]:
    return _listed(call)


@routes.get("/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/listMapped")
def get_mapped_task_instances(call: Call) -> dict[str, Any]:
    """Every map index of a mapped task in one run (paged and filtered as the list)."""
    dag_id, task_id = call.path("dag_id"), call.path("task_id")
    _meta, sdag = dag_or_404(call, dag_id)
    task = getattr(sdag, "task_dict", {}).get(task_id)
    if task is None:
        raise NotFound(f"Task id {task_id} not found")
    if not task.is_mapped:
        raise NotFound(f"Task id {task_id} is not mapped")
    return _listed(call, task_id)


def _one(call: Call, map_index: int) -> dict[str, Any]:
    dag_id, run_id, task_id = call.path("dag_id"), call.path("dag_run_id"), call.path("task_id")
    dag_or_404(call, dag_id)
    run = run_or_404(call, dag_id, run_id)
    sdag = _sdag(call, run)
    instances = [ti for ti in run_instances(call, run, sdag) if ti.task_id == task_id]
    found = next((ti for ti in instances if ti.map_index == map_index), None)
    if found is None:
        if map_index == UNMAPPED and instances:
            raise NotFound("Task instance is mapped, add the map_index value to the URL")
        raise NotFound(f"The Task Instance with dag_id: `{dag_id}`, run_id: `{run_id}`, task_id: `{task_id}` "
                       f"and map_index: `{map_index}` was not found")
    return ti_response(found, run, sdag)


@routes.get("/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}")
def get_task_instance(call: Call) -> dict[str, Any]:
    return _one(call, UNMAPPED)


@routes.get("/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/{map_index}")
def get_mapped_task_instance(call: Call) -> dict[str, Any]:
    return _one(call, call.int_path("map_index"))


PATCH_BODY = {"new_state": Field("str"), "note": Field("str", max_length=NOTE_LENGTH),
              "include_upstream": Field("bool", nullable=False), "include_downstream": Field("bool", nullable=False),
              "include_future": Field("bool", nullable=False), "include_past": Field("bool", nullable=False)}
MARKABLE = ("success", "failed", "skipped")


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
        if body["new_state"] not in MARKABLE:
            raise Unprocessable([issue("value_error", ("body", "new_state"),
                                       f"Value error, '{body['new_state']}' is not one of {list(MARKABLE)}",
                                       new_state)])
    applied = {k: v for k, v in body.items() if k in mask} if mask else dict(body)
    return {**applied, **{k: v for k, v in body.items() if k.startswith("include_")}}


def _patched(call: Call, map_index: int | None, *, dry_run: bool) -> dict[str, Any]:
    """Airflow's ``patch_task_instance`` (and its ``dry_run``): note first, then the state, over the run's
    instances of the task (one map index, or all of them)."""
    from updraft.model.states import TaskInstanceState
    from updraft.scheduling.marking import marked_selection, runs_in_range

    dag_id, run_id, task_id = call.path("dag_id"), call.path("dag_run_id"), call.path("task_id")
    body = _patch_body(call)
    _meta, latest = dag_or_404(call, dag_id)
    run = run_or_404(call, dag_id, run_id)
    sdag = _sdag(call, run)
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
            other_sdag = _sdag(call, other)
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


def _mark(call: Call, sdag: Any, runs: list[Any], task_id: str, map_index: int | None, state: Any,
          body: dict[str, Any], now: Any) -> None:
    from updraft.scheduling.clearing import Selection, relatives, resets, to_clear
    from updraft.scheduling.manual_changes import apply_marks, apply_resets
    from updraft.scheduling.marking import marked_selection, task_marks

    selection = marked_selection(sdag, task_id, map_index, upstream=bool(body.get("include_upstream")),
                                 downstream=bool(body.get("include_downstream")))
    applied = []
    for run in runs:
        run_sdag = _sdag(call, run)
        tis = run_instances(call, run, run_sdag)
        applied += apply_marks(call.store, task_marks(tis, selection, state, now=now),
                               before={ti.key: ti for ti in tis})
    if not applied:
        raise Conflict(f"Task id {task_id} is already in {state.value} state")
    # As Airflow: the failed downstream of the marked task is cleared, so the run can go on from the mark.
    downstream = Selection(frozenset(relatives(sdag, [task_id], upstream=False)))
    for run in runs:
        run_sdag = _sdag(call, run)
        chosen = to_clear(call.store.get_run_tis(run.dag_id, run.run_id), downstream, only_failed=True)
        apply_resets(call.store, run, resets(run_sdag, chosen), now=now)
    nudge(call, runs[0].dag_id, [r.run_id for r in runs])


def _collection(tis: list[TaskInstance], run: Any, sdag: Any) -> dict[str, Any]:
    return {"task_instances": [ti_response(ti, run, sdag) for ti in tis], "total_entries": len(tis)}


# The dry-run routes first: ``.../{task_id}/dry_run`` would otherwise be taken for a map index.
@routes.patch("/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/dry_run")
def patch_task_instance_dry_run(call: Call) -> dict[str, Any]:
    return _patched(call, None, dry_run=True)


@routes.patch("/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/{map_index}/dry_run")
def patch_task_instance_dry_run_by_map_index(call: Call) -> dict[str, Any]:
    return _patched(call, call.int_path("map_index"), dry_run=True)


@routes.patch("/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}")
def patch_task_instance(call: Call) -> dict[str, Any]:
    return _patched(call, None, dry_run=False)


@routes.patch("/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/{map_index}")
def patch_task_instance_by_map_index(call: Call) -> dict[str, Any]:
    return _patched(call, call.int_path("map_index"), dry_run=False)


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
def post_clear_task_instances(call: Call) -> dict[str, Any]:
    """Clear the named task instances (with their relatives) in one run, or in the runs whose logical date is in
    [start_date, end_date]; ``dry_run`` (the default) lists them without clearing."""
    from updraft.model.states import TaskInstanceState
    from updraft.scheduling.clearing import Selection, resets, to_clear, with_relatives
    from updraft.scheduling.manual_changes import apply_resets

    dag_id = call.path("dag_id")
    body = _clear_body(call)
    _meta, latest = dag_or_404(call, dag_id)
    past, future = bool(body.get("include_past")), bool(body.get("include_future"))
    start, end = body.get("start_date"), body.get("end_date")
    run_id = body.get("dag_run_id")
    if run_id is not None:
        run = call.store.get_run(dag_id, run_id)
        if run is None:
            raise NotFound(f"Dag Run id {run_id} not found in dag {dag_id}")
        if (past or future) and run.logical_date is None:
            raise BadRequest("Cannot use include_past or include_future with no logical_date(e.g. manually or "
                             "asset-triggered).")
        start = end = run.logical_date
    if past:
        start = None
    if future:
        end = None
    runs = _runs_between(call, dag_id, start, end) if run_id is None or past or future else [run]
    markers = body.get("task_ids")
    selection = Selection() if markers is None else Selection(
        frozenset(m for m in markers if isinstance(m, str)), frozenset((m[0], m[1]) for m in markers
                                                                       if isinstance(m, list)))
    selection = with_relatives(latest, selection, upstream=bool(body.get("include_upstream")),
                               downstream=bool(body.get("include_downstream")))
    found = []
    for run in runs:
        sdag = _sdag(call, run)
        chosen = to_clear(call.store.get_run_tis(dag_id, run.run_id), selection,
                          only_failed=bool(body["only_failed"]), only_running=bool(body.get("only_running")))
        if chosen:
            found.append((run, sdag, chosen))
    if body["dry_run"]:
        return _cleared(found, {})
    if body.get("prevent_running_task") and any(ti.state == TaskInstanceState.RUNNING
                                                for _, _, chosen in found for ti in chosen):
        raise Conflict("AirflowClearRunningTaskException: Disable 'prevent_running_task' to proceed, or wait until "
                       "the task is not running, queued, or scheduled state.")
    current = {}
    for run, sdag, chosen in found:
        apply_resets(call.store, run, resets(sdag, chosen, note=body.get("note")), now=call.now(),
                     reset_dag_runs=bool(body["reset_dag_runs"]))
        current.update({ti.key: ti for ti in call.store.get_run_tis(dag_id, run.run_id)})
    nudge(call, dag_id, [run.run_id for run, _, _ in found])
    return _cleared(found, current)


def _cleared(found: list[tuple[Any, Any, list[TaskInstance]]], current: dict[Any, TaskInstance]) -> dict[str, Any]:
    """The instances a clear took, as they are now (``current``) or, for a dry run, as they were read."""
    responses = [ti_response(current.get(ti.key, ti), run, sdag) for run, sdag, chosen in found for ti in chosen]
    return {"task_instances": responses, "total_entries": len(responses)}


def _runs_between(call: Call, dag_id: str, start: Any, end: Any) -> list[Any]:
    """The DAG's runs whose logical date is in [start, end] (either open); a run without one only when neither
    bound is given, as Airflow's date filter leaves it out."""
    runs = call.store.list_runs(dag_id)
    if start is None and end is None:
        return runs
    return [r for r in runs if r.logical_date is not None and (start is None or r.logical_date >= start)
            and (end is None or r.logical_date <= end)]
