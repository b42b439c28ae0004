"""Human-in-the-loop requests (Airflow's ``hitlDetails``): list (``~`` for every run of a DAG, or of every DAG),
get one (the current try's, or a try's by number), and respond (``PATCH``), as Airflow 3.3's routes.

A request lives on its task instance (``model.hitl``: Airflow's ``hitl_detail`` row of the try). A response is
checked as Airflow checks it (the options offered, one unless ``multiple``, the caller among ``assigned_users``
when the request names any) and written with one conditional write that also resumes the deferred try, fenced on
its try token (Airflow's event-driven resume, ``handle_event_submit``): the try is ``scheduled`` with the response
as its ``execute_complete`` event at once, its timeout's wait is stopped and the scheduler nudged, so no poll sits
between a response and the task going on. A response to a request already answered is a 409 unless it is the same
response from the same user (a client's retry, which answers the recorded response again).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from updraft.api.auth import iam_caller_role
from updraft.api.auth.identity import identify
from updraft.api.body import Field, parse_body
from updraft.api.changes import nudge
from updraft.api.errors import BadRequest, Conflict, Forbidden, NotFound, Unprocessable, issue
from updraft.api.filters import date_bounds, range_checks
from updraft.api.formats import pattern_matcher
from updraft.api.lookups import WILDCARD, dag_or_404, field_keys, run_or_404
from updraft.api.pagination import page_of, paginate
from updraft.api.routes.task_instance_tries import history_response
from updraft.api.routes.task_instances import TI_STATES, run_dag, ti_id, ti_response
from updraft.api.routing import Call, RouteTable
from updraft.model import hitl
from updraft.model.records import DagRun, TaskInstance, TIKey
from updraft.model.states import TaskInstanceState
from updraft.scheduling import stop_waits

if TYPE_CHECKING:
    from updraft.api.models import HITLDetailResponse, TaskInstanceHistoryResponse, TaskInstanceResponse

routes = RouteTable()

_ONE = "/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/{map_index}/hitlDetails"
PATCH_BODY = {"chosen_options": Field("strings", required=True), "params_input": Field("object")}
HITL_ORDER = field_keys("ti_id", "subject", "responded_at", "created_at", "responded_by_user_id",
                        "responded_by_user_name", "dag_id", "run_id", "task_display_name", "run_after",
                        "rendered_map_index", "task_instance_operator", "task_instance_state")


def _params(params: dict[str, Any]) -> dict[str, Any]:
    """Airflow's ``BaseHITLDetail.params``: a serialized Param as it is, a bare value wrapped as one."""
    return {key: value if isinstance(value, dict) and {"description", "schema", "value"} <= set(value)
            else {"value": value, "description": None, "schema": {}} for key, value in params.items()}


def detail_response(record: dict[str, Any], task_instance: TaskInstanceResponse | TaskInstanceHistoryResponse
                    ) -> dict[str, Any]:
    """Airflow's ``HITLDetail`` (``HITLDetailHistory`` with a history ``task_instance``). Untyped: the two models
    differ only in ``task_instance``, and a TypedDict's item types are invariant, so one builder cannot be both."""
    return {"options": record.get("options") or [], "subject": record.get("subject") or "",
            "body": record.get("body"), "defaults": record.get("defaults"), "multiple": bool(record.get("multiple")),
            "params": _params(record.get("params") or {}), "assigned_users": record.get("assigned_users") or [],
            "created_at": record.get("created_at"), "responded_by_user": record.get("responded_by"),
            "responded_at": record.get("responded_at"), "chosen_options": record.get("chosen_options"),
            "params_input": record.get("params_input") or {}, "response_received": hitl.responded(record),
            "task_instance": task_instance}


def _no_detail(ti: TaskInstance) -> NotFound:
    return NotFound(f"Human-in-the-loop detail does not exist for Task Instance with id {ti_id(ti)}")


def _instance(call: Call) -> tuple[TaskInstance, Any, Any]:
    dag_id, run_id, task_id = call.path("dag_id"), call.path("dag_run_id"), call.path("task_id")
    map_index = call.int_path("map_index")
    dag_or_404(call, dag_id)
    run = run_or_404(call, dag_id, run_id)
    ti = call.store.get_ti(TIKey(dag_id, run_id, task_id, map_index))
    if ti is None:
        raise NotFound(f"The Task Instance with dag_id: `{dag_id}`, run_id: `{run_id}`, task_id: `{task_id}` "
                       f"and map_index: `{map_index}` was not found")
    return ti, run, run_dag(call, run)


@routes.get(_ONE)
def get_hitl_detail(call: Call) -> dict[str, Any]:
    ti, run, sdag = _instance(call)
    record = hitl.of_try(ti.hitl, ti.try_number)
    if record is None:
        raise _no_detail(ti)
    return detail_response(record, ti_response(ti, run, sdag))


@routes.get(_ONE + "/tries/{try_number}")
def get_hitl_detail_try_detail(call: Call) -> dict[str, Any]:
    """A try's request: the instance's when it is that try, else its recorded try's (Airflow's history row)."""
    number = call.int_path("try_number")
    ti, run, sdag = _instance(call)
    tries = [ti, *reversed(call.store.get_tries(ti.key))]
    found = next((t for t in tries if t.try_number == number and hitl.of_try(t.hitl, number)), None)
    if found is None:
        if all(t.try_number != number for t in tries):
            raise NotFound(f"The Task Instance with dag_id: `{ti.dag_id}`, run_id: `{ti.run_id}`, task_id: "
                           f"`{ti.task_id}` and map_index: `{ti.map_index}` was not found")
        raise _no_detail(ti)
    return detail_response(hitl.of_try(found.hitl, number) or {}, history_response(found, run, sdag))


@routes.get("/dags/{dag_id}/dagRuns/{dag_run_id}/hitlDetails")
def get_hitl_details(call: Call) -> dict[str, Any]:
    q = call.query
    page = page_of(q, ["ti_id"])
    dag_matches = pattern_matcher(q.string("dag_id_pattern"))
    dag_prefix = q.string("dag_id_prefix_pattern") or ""
    task_id = q.string("task_id")
    task_matches = pattern_matcher(q.string("task_id_pattern"))
    task_prefix = q.string("task_id_prefix_pattern") or ""
    map_index = q.integer("map_index")
    states = set(q.choices("state", TI_STATES))
    received = q.boolean("response_received")
    user_ids, user_names = set(q.strings("responded_by_user_id")), set(q.strings("responded_by_user_name"))
    subject_matches = pattern_matcher(q.string("subject_search"))
    body_matches = pattern_matcher(q.string("body_search"))
    dates = range_checks(date_bounds(q, ("created_at",)))
    q.check()
    rows = []
    for run in _runs(call, call.path("dag_id"), call.path("dag_run_id")):
        sdag = None
        for ti in call.store.get_run_tis(run.dag_id, run.run_id):
            record = hitl.of_try(ti.hitl, ti.try_number)
            if record is None:
                continue
            sdag = sdag or run_dag(call, run)
            rows.append(detail_response(record, ti_response(ti, run, sdag)))

    def wanted(row: dict[str, Any]) -> bool:
        ti, user = row["task_instance"], row["responded_by_user"] or {}
        return (dag_matches(ti["dag_id"]) and ti["dag_id"].startswith(dag_prefix)
                and (task_id is None or ti["task_id"] == task_id) and task_matches(ti["task_id"])
                and ti["task_id"].startswith(task_prefix)
                and (map_index is None or ti["map_index"] == map_index)
                and (not states or (ti["state"] or "no_status") in states)
                and (received is None or row["response_received"] == received)
                and (not user_ids or user.get("id") in user_ids)
                and (not user_names or user.get("name") in user_names)
                and subject_matches(row["subject"]) and body_matches(row["body"] or "")
                and all(check(row) for check in dates))

    keyed = [{**row, **_sort_fields(row)} for row in rows if wanted(row)]
    found, total = paginate(keyed, page, HITL_ORDER)
    return {"hitl_details": [{k: v for k, v in row.items() if k not in _SORT_ONLY} for row in found],
            "total_entries": total}


def _runs(call: Call, dag_id: str, run_id: str) -> list[DagRun]:
    """The runs a list path names (``~``: all); as Airflow's list, an unknown DAG or run only lists nothing."""
    metas = (call.store.list_dags(include_inactive=True) if dag_id == WILDCARD
             else [meta for meta in (call.store.get_dag_meta(dag_id),) if meta is not None])
    runs: list[DagRun] = []
    for meta in metas:
        if run_id == WILDCARD:
            runs += call.store.list_runs(meta.dag_id)
        elif (run := call.store.get_run(meta.dag_id, run_id)) is not None:
            runs.append(run)
    return runs


_SORT_ONLY = ("ti_id", "responded_by_user_id", "responded_by_user_name", "dag_id", "run_id", "task_display_name",
              "run_after", "rendered_map_index", "task_instance_operator", "task_instance_state")


def _sort_fields(row: dict[str, Any]) -> dict[str, Any]:
    """The fields Airflow's ``order_by`` names that live on the task instance or the responder."""
    ti, user = row["task_instance"], row["responded_by_user"] or {}
    return {"ti_id": ti["id"], "responded_by_user_id": user.get("id"), "responded_by_user_name": user.get("name"),
            "dag_id": ti["dag_id"], "run_id": ti["dag_run_id"], "task_display_name": ti["task_display_name"],
            "run_after": ti["run_after"], "rendered_map_index": ti["rendered_map_index"],
            "task_instance_operator": ti["operator"], "task_instance_state": ti["state"]}


def _payload(call: Call) -> tuple[list[str], dict[str, Any]]:
    body = parse_body(call.request.body, PATCH_BODY)
    chosen = body["chosen_options"]
    if not chosen:
        raise Unprocessable([issue("too_short", ("body", "chosen_options"),
                                   "List should have at least 1 item after validation, not 0", chosen)])
    return list(chosen), dict(body.get("params_input") or {})


def _responder(call: Call) -> dict[str, str]:
    who = identify(call.request.context, iam_caller_role(call.services.config))
    name = who.name or "anonymous"
    return {"id": name, "name": name}


def _answer(record: dict[str, Any]) -> HITLDetailResponse:
    """Airflow's ``HITLDetailResponse`` of a request responded to (``hitl.with_response`` sets who and when)."""
    return {"responded_by": record["responded_by"], "responded_at": record["responded_at"],
            "chosen_options": record.get("chosen_options") or [], "params_input": record.get("params_input") or {}}


def _resume_fields(ti: TaskInstance, record: dict[str, Any]) -> dict[str, Any]:
    return {"hitl": record, "trigger": None, "lease_expires_at": None, "next_method": ti.next_method,
            "next_kwargs": {**(ti.next_kwargs or {}), "event": hitl.response_event(record)}}


@routes.patch(_ONE)
def update_hitl_detail(call: Call) -> HITLDetailResponse:
    chosen, params_input = _payload(call)
    ti, _run, _sdag = _instance(call)
    record = hitl.of_try(ti.hitl, ti.try_number)
    if record is None:
        raise _no_detail(ti)
    user = _responder(call)
    if hitl.responded(record):
        if (record.get("chosen_options") == chosen and (record.get("params_input") or {}) == params_input
                and record.get("responded_by") == user):
            return _answer(record)  # the same response again (a retry): already recorded
        raise Conflict(f"Human-in-the-loop detail has already been updated for Task Instance with id {ti_id(ti)} "
                       "and is not allowed to write again.")
    assigned = {u.get("id") for u in record.get("assigned_users") or []}
    if assigned and user["id"] not in assigned:
        raise Forbidden(f"User={user['name']} (id={user['id']}) is not a respondent for the task.")
    if problem := hitl.response_problem(record, chosen):
        raise BadRequest(problem)
    answered = hitl.with_response(record, chosen_options=chosen, params_input=params_input, user=user,
                                  now=call.now())
    if not _record(call, ti, answered):
        raise Conflict(f"Task Instance with id {ti_id(ti)} changed while the response was recorded; read it "
                       "again and respond if it still waits")
    return _answer(answered)


def _record(call: Call, ti: TaskInstance, answered: dict[str, Any]) -> bool:
    """Write the response, resuming the try when it waits for it (fenced on its try); then stop its timeout's
    wait and nudge the scheduler. False: the instance changed since it was read."""
    if ti.state == TaskInstanceState.DEFERRED and hitl.is_hitl(ti.trigger):
        if not call.store.apply_ti_change(ti.key, expected=TaskInstanceState.DEFERRED,
                                          state=TaskInstanceState.SCHEDULED, expected_try_id=ti.try_id,
                                          fields=_resume_fields(ti, answered)):
            return False
        stop_waits(call.services.waits, [ti])
        nudge(call, ti.dag_id, [ti.run_id])
        return True
    # Not waiting (it timed out without defaults, or was marked or failed): recorded as Airflow records it.
    return bool(call.store.apply_ti_change(ti.key, expected=ti.state, state=ti.state, expected_try_id=ti.try_id,
                                           fields={"hitl": answered})) if ti.state is not None else False

