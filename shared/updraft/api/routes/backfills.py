"""Backfills: create (and dry-run), list by DAG, get, pause, unpause and cancel, as Airflow 3's ``/backfills``
routes with its ``BackfillResponse`` and ``DryRunBackfillCollectionResponse``.

The rules are :mod:`updraft.scheduling.commands`; their errors pass through to the app, which answers
them as Airflow does (:mod:`updraft.api.domain_errors`): an unknown DAG 404, a second active backfill 409, a
schedule, date range, direction, conf or reprocess behaviour that does not allow the backfill 422
``{"detail": "<message>"}`` (Airflow raises a ``RequestValidationError`` with the message), a completed backfill
409 on pause/unpause/cancel. The scheduler creates the runs on its next tick.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from updraft.api.body import Field, parse_body
from updraft.api.errors import BadRequest, NotFound, Unprocessable, issue
from updraft.api.formats import iso
from updraft.api.lookups import display_name
from updraft.api.pagination import page_of, paginate
from updraft.api.routing import Call, RouteTable
from updraft.model.backfills import DEFAULT_MAX_ACTIVE_RUNS, Backfill, ReprocessBehavior
from updraft.model.identifiers import ID_LEN

if TYPE_CHECKING:
    from updraft.api.models import BackfillCollectionResponse, BackfillResponse, DryRunBackfillCollectionResponse

routes = RouteTable()

MAX_CONF_BYTES = 300_000  # a backfill (and each of its runs) is one DynamoDB item
POST_BODY = {
    "dag_id": Field("str", required=True, nullable=False, max_length=ID_LEN, key=True),
    "from_date": Field("datetime", required=True, nullable=False, aware=False),
    "to_date": Field("datetime", required=True, nullable=False, aware=False),
    "run_backwards": Field("bool", nullable=False), "dag_run_conf": Field("object"),
    "reprocess_behavior": Field("str", nullable=False),
    "max_active_runs": Field("int", nullable=False, minimum=1, maximum=2**31 - 1),
    "run_on_latest_version": Field("bool"),
}
BACKFILL_ORDER = {"id": lambda b: b.id}


def backfill_response(call: Call, backfill: Backfill) -> BackfillResponse:
    meta = call.store.get_dag_meta(backfill.dag_id)
    sdag = call.store.get_serialized_dag(backfill.dag_id, meta.dag_hash) if meta is not None else None
    return {
        "id": backfill.id, "dag_id": backfill.dag_id, "from_date": iso(backfill.from_date),
        "to_date": iso(backfill.to_date), "dag_run_conf": backfill.dag_run_conf, "is_paused": backfill.is_paused,
        "reprocess_behavior": str(backfill.reprocess_behavior), "max_active_runs": backfill.max_active_runs,
        "created_at": iso(backfill.created_at), "completed_at": iso(backfill.completed_at),
        "updated_at": iso(backfill.updated_at), "dag_display_name": display_name(sdag, backfill.dag_id),
    }


def _request(call: Call) -> Any:
    # lazy: cold start (the API's build imports every route module; scheduling only on this route)
    from updraft.scheduling.commands import BackfillRequest

    body = parse_body(call.request.body, POST_BODY)
    reprocess = body.get("reprocess_behavior", ReprocessBehavior.NONE.value)
    if reprocess not in {r.value for r in ReprocessBehavior}:
        raise Unprocessable([issue("enum", ("body", "reprocess_behavior"),
                                   "Input should be 'failed', 'completed' or 'none'", reprocess)])
    if body.get("run_on_latest_version") is False:
        raise BadRequest("Updraft runs a backfill on the DAG's latest version: run_on_latest_version must not be "
                         "false")
    if len(str(body.get("dag_run_conf") or {})) > MAX_CONF_BYTES:
        raise BadRequest(f"dag_run_conf is larger than {MAX_CONF_BYTES} bytes: Updraft keeps a backfill in one "
                         "DynamoDB item (at most 400 KB)")
    return BackfillRequest(dag_id=body["dag_id"], from_date=body["from_date"], to_date=body["to_date"],
                           run_backwards=body.get("run_backwards", False), dag_run_conf=body.get("dag_run_conf"),
                           reprocess_behavior=ReprocessBehavior(reprocess),
                           max_active_runs=body.get("max_active_runs", DEFAULT_MAX_ACTIVE_RUNS))


@routes.post("/backfills")
def create_backfill(call: Call) -> BackfillResponse:
    # lazy: cold start (the API's build imports every route module; scheduling only on this route)
    from updraft.scheduling.commands import create_backfill as create

    request = _request(call)
    backfill = create(call.store, request, now=call.now(), triggering_user_name=call.request.caller)
    return backfill_response(call, backfill)


@routes.post("/backfills/dry_run")
def create_backfill_dry_run(call: Call) -> DryRunBackfillCollectionResponse:
    # lazy: cold start (the API's build imports every route module; scheduling only on this route)
    from updraft.scheduling.commands import backfill_dry_run as dry_run

    request = _request(call)
    infos = dry_run(call.store, request, now=call.now())
    return {"backfills": [{"logical_date": iso(i.logical_date), "partition_key": None, "partition_date": None}
                          for i in infos], "total_entries": len(infos)}


@routes.get("/backfills")
def list_backfills(call: Call) -> BackfillCollectionResponse:
    dag_id = call.query.string("dag_id")
    if dag_id is None:
        call.query.issues.append(issue("missing", ("query", "dag_id"), "Field required", None))
    page = page_of(call.query, ["id"])
    call.query.check()
    assert dag_id is not None  # check() answered 422 without it
    backfills, total = paginate(call.store.list_backfills(dag_id), page, BACKFILL_ORDER)
    return {"backfills": [backfill_response(call, b) for b in backfills], "total_entries": total}


def _backfill_id(call: Call) -> int:
    backfill_id = call.int_path("backfill_id")
    if backfill_id < 0:
        raise Unprocessable([issue("greater_than_equal", ("path", "backfill_id"),
                                   "Input should be greater than or equal to 0", call.path("backfill_id"))])
    return backfill_id


@routes.get("/backfills/{backfill_id}")
def get_backfill(call: Call) -> BackfillResponse:
    backfill = call.store.get_backfill(_backfill_id(call))
    if backfill is None:
        raise NotFound("Backfill not found")
    return backfill_response(call, backfill)


def _change(call: Call, action: str) -> BackfillResponse:
    # lazy: cold start (the API's build imports every route module; scheduling only on this route)
    from updraft.scheduling.commands import cancel_backfill, set_backfill_paused

    backfill_id = _backfill_id(call)
    if action == "cancel":
        backfill = cancel_backfill(call.store, backfill_id, now=call.now())
    else:
        backfill = set_backfill_paused(call.store, backfill_id, action == "pause", now=call.now())
    return backfill_response(call, backfill)


@routes.put("/backfills/{backfill_id}/pause")
def pause_backfill(call: Call) -> BackfillResponse:
    return _change(call, "pause")


@routes.put("/backfills/{backfill_id}/unpause")
def unpause_backfill(call: Call) -> BackfillResponse:
    return _change(call, "unpause")


@routes.put("/backfills/{backfill_id}/cancel")
def cancel_backfill(call: Call) -> BackfillResponse:
    """Airflow's cancel: no new runs, the queued ones fail, running ones finish; completed at once."""
    return _change(call, "cancel")
