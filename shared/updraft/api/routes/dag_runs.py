"""DAG runs: list (``~`` for every DAG), get, trigger (``POST /dags/{dag_id}/dagRuns``), patch (state, note),
delete and clear, as Airflow's ``DAGRunResponse``.

Triggering goes through :func:`updraft.scheduling.commands.triggering.trigger_dag`, the CLI's ``dags trigger``: conf is
validated against the DAG's params (400), an unknown DAG is 404 and a ``dag_run_id`` already used is 409. Then
the scheduler is nudged so the run starts now rather than at the next tick.

Patching a run's state to success or failed is Airflow's mark (:mod:`updraft.scheduling.decisions`): running tries
take that state, every other unfinished instance is skipped, and the slots they held go back; queued hands the
run back to the scheduler. Clearing (``dry_run`` true by default, as in Airflow, lists what would be cleared)
resets every instance, or only the failed ones, and requeues a finished run (:mod:`updraft.scheduling.decisions`).
Deleting removes the run with its task instances, recorded tries and XComs; a running run is a 409, as in Airflow.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from updraft.api.body import Field, parse_body
from updraft.api.changes import NOTE_LENGTH, check_enum, nudge, refuse
from updraft.api.errors import BadRequest, Conflict, Unprocessable, issue, run_not_found
from updraft.api.filters import COMPARISONS, date_bounds, range_checks, range_names
from updraft.api.formats import iso, pattern_matcher, seconds_between
from updraft.api.lookups import (
    WILDCARD,
    dag_or_404,
    display_name,
    field_keys,
    run_after,
    run_or_404,
    run_version_or_404,
)
from updraft.api.pagination import MAXIMUM_PAGE_LIMIT, Page, page_of, paginate
from updraft.api.routes.task_instances import run_instances, ti_response
from updraft.api.routing import Call, Reply, RouteTable
from updraft.model.identifiers import ID_LEN
from updraft.model.records import DagRun
from updraft.model.states import FAILED_TI_STATES, MUTABLE_RUN_STATES, DagRunState, DagRunType

if TYPE_CHECKING:
    from updraft.api.models import ClearTaskInstanceCollectionResponse, DAGRunCollectionResponse, DAGRunResponse

log = logging.getLogger(__name__)

routes = RouteTable()

# Airflow's run types: Updraft's and asset_materialization (which Updraft never creates, so it matches no run).
RUN_TYPES = frozenset({*DagRunType, "asset_materialization"})
# Who created a run, by run type, where Updraft knows it (a manual run may come from the CLI or the API).
TRIGGERED_BY = {"scheduled": "timetable", "backfill": "backfill", "asset_triggered": "asset",
                "operator_triggered": "operator"}
DATE_FILTERS = ("logical_date", "run_after", "start_date", "end_date")
RUN_ORDER = field_keys("dag_id", "dag_run_id", "state", "run_type", "logical_date", "run_after", "queued_at",
                       "start_date", "end_date", "data_interval_start", "data_interval_end", "duration",
                       aliases={"run_id": "dag_run_id", "id": "queued_at"})
TRIGGER_BODY = {
    "dag_run_id": Field("str", max_length=ID_LEN, key=True),
    "data_interval_start": Field("datetime"), "data_interval_end": Field("datetime"),
    "logical_date": Field("datetime", required=True), "run_after": Field("datetime"), "conf": Field("object"),
    "note": Field("str"), "partition_key": Field("str", max_length=ID_LEN),
}


def run_response(run: DagRun, dag_display_name: str) -> DAGRunResponse:
    return {
        "dag_run_id": run.run_id, "dag_id": run.dag_id, "logical_date": iso(run.logical_date),
        "queued_at": iso(run.queued_at), "start_date": iso(run.start_date), "end_date": iso(run.end_date),
        "duration": seconds_between(run.start_date, run.end_date),
        "data_interval_start": iso(run.data_interval_start), "data_interval_end": iso(run.data_interval_end),
        "run_after": iso(run_after(run)),
        "last_scheduling_decision": None, "run_type": run.run_type, "state": run.state.value,
        "triggered_by": run.triggered_by or TRIGGERED_BY.get(run.run_type),
        "triggering_user_name": run.triggering_user_name,
        "conf": run.conf, "note": run.note, "dag_versions": [], "bundle_version": None,
        "dag_display_name": dag_display_name, "partition_key": run.partition_key,
        "partition_date": iso(run.partition_date),
    }


def _dag_names(call: Call, dag_ids: set[str]) -> dict[str, str]:
    names = {}
    for dag_id in dag_ids:
        meta = call.store.get_dag_meta(dag_id)
        sdag = call.store.get_serialized_dag(dag_id, meta.dag_hash) if meta is not None else None
        names[dag_id] = display_name(sdag, dag_id)
    return names


def _dag_ids(call: Call, dag_id: str, matches_dag: Callable[[str], bool]) -> list[str]:
    """The DAGs a path names: one (404 when unknown), or every DAG, stale ones too, with ``~``."""
    if dag_id == WILDCARD:
        return [m.dag_id for m in call.store.list_dags(include_inactive=True) if matches_dag(m.dag_id)]
    dag_or_404(call, dag_id)
    return [dag_id]


def _listed(call: Call, dag_ids: list[str], page: Page, keep: Callable[[DAGRunResponse], bool]
            ) -> DAGRunCollectionResponse:
    """Each DAG's runs (one date-index query per DAG) as responses, filtered by ``keep``, ordered and paged."""
    runs = [run for d in dag_ids for run in call.store.list_runs(d)]
    names = _dag_names(call, {run.dag_id for run in runs})
    responses = [r for r in (run_response(run, names[run.dag_id]) for run in runs) if keep(r)]
    found, total = paginate(responses, page, RUN_ORDER)
    return {"dag_runs": found, "total_entries": total}


@routes.get("/dags/{dag_id}/dagRuns")
def get_dag_runs(call: Call) -> DAGRunCollectionResponse:
    """One DAG's runs, or every DAG's with ``~``."""
    q = call.query
    page = page_of(q, ["id"])
    states = set(q.choices("state", frozenset(DagRunState)))
    run_types = set(q.choices("run_type", RUN_TYPES))
    matches_run = pattern_matcher(q.string("run_id_pattern"))
    matches_dag = pattern_matcher(q.string("dag_id_pattern"))
    ranges = range_checks(date_bounds(q, DATE_FILTERS))
    q.check()

    def keep(r: DAGRunResponse) -> bool:
        return ((not states or r["state"] in states) and (not run_types or r["run_type"] in run_types)
                and matches_run(r["dag_run_id"]) and all(check(r) for check in ranges))

    return _listed(call, _dag_ids(call, call.path("dag_id"), matches_dag), page, keep)


BATCH_BODY = {"order_by": Field("str"), "page_offset": Field("int", nullable=False, minimum=0),
              "page_limit": Field("int", nullable=False, minimum=0), "dag_ids": Field("strings"),
              "states": Field("strings"), "conf_contains": Field("str"),
              **{name: Field("datetime", aware=False) for name in range_names(DATE_FILTERS)},
              **{name: Field("number") for name in range_names(("duration",))}}


@routes.post("/dags/{dag_id}/dagRuns/list")
def get_list_dag_runs_batch(call: Call) -> DAGRunCollectionResponse:
    """The list with its filters in a body (``~`` and ``dag_ids`` for several DAGs); a ``null`` state matches
    nothing, as Airflow's runs always have one."""
    body = parse_body(call.request.body, BATCH_BODY)
    states = set(body.get("states") or [])
    unknown = sorted(str(s) for s in states - set(DagRunState) - {None})
    if unknown:
        expected = ", ".join(f"'{s}'" for s in sorted(DagRunState))
        raise Unprocessable([issue("enum", ("body", "states"), f"Input should be {expected}", unknown[0])])
    wanted_dags = set(body.get("dag_ids") or [])
    conf_contains = body.get("conf_contains")
    ranges = range_checks({k: v for k, v in body.items() if k.rsplit("_", 1)[-1] in COMPARISONS})
    order_by = body.get("order_by")
    page = Page(limit=min(body.get("page_limit", MAXIMUM_PAGE_LIMIT), MAXIMUM_PAGE_LIMIT),
                offset=body.get("page_offset", 0), order_by=(order_by,) if order_by else ("id",))

    def keep(r: DAGRunResponse) -> bool:
        return ((not states or r["state"] in states)
                and (conf_contains is None or conf_contains in json.dumps(r["conf"] or {}))
                and all(check(r) for check in ranges))

    dag_ids = _dag_ids(call, call.path("dag_id"), lambda d: not wanted_dags or d in wanted_dags)
    return _listed(call, dag_ids, page, keep)


@routes.get("/dags/{dag_id}/dagRuns/{dag_run_id}")
def get_dag_run(call: Call) -> DAGRunResponse:
    dag_id = call.path("dag_id")
    run = run_or_404(call, dag_id, call.path("dag_run_id"))
    return run_response(run, _dag_names(call, {dag_id})[dag_id])


MAX_CONF_BYTES = 300_000
_UNSUPPORTED_TRIGGER_FIELDS = ("data_interval_start", "data_interval_end", "run_after", "note")


@routes.post("/dags/{dag_id}/dagRuns")
def trigger_dag_run(call: Call) -> Reply:
    """Airflow's trigger; a DAG whose file has import errors (another DAG of it failed) is refused, as in
    Airflow. A null ``logical_date`` gives the run the trigger time as its logical date (Updraft
    gives every manual run one, so templates such as ``ds`` render, as the CLI's trigger does)."""
    # lazy: cold start (the API's build imports every route module; scheduling only on this route)
    from updraft.scheduling.commands import trigger_dag

    dag_id = call.path("dag_id")
    body = parse_body(call.request.body, TRIGGER_BODY)
    unsupported = [name for name in _UNSUPPORTED_TRIGGER_FIELDS if body.get(name) is not None]
    if unsupported:
        raise BadRequest(f"Updraft does not support {', '.join(unsupported)} when triggering a run yet")
    if len(json.dumps(body.get("conf") or {})) > MAX_CONF_BYTES:
        raise BadRequest(f"conf is larger than {MAX_CONF_BYTES} bytes of JSON: Updraft keeps a run in one "
                         "DynamoDB item (at most 400 KB)")
    meta = call.store.get_dag_meta(dag_id)
    if meta is not None and meta.relative_fileloc in {e["filename"] for e in call.store.list_import_errors()}:
        raise BadRequest(f"DAG with dag_id: '{dag_id}' has import errors and cannot be triggered")
    run = trigger_dag(call.store, dag_id, now=call.now(), conf=body.get("conf"),
                      logical_date=body.get("logical_date"), run_id=body.get("dag_run_id"),
                      partition_key=body.get("partition_key"),
                      # As Airflow: a browser's request (it sends a Referer) is the UI's, any other the API's.
                      triggered_by="ui" if call.request.header("referer") else "rest_api",
                      triggering_user_name=call.request.caller)
    headers = {}
    try:
        call.services.nudge_scheduler(dag_id, run.run_id)
    except Exception as err:  # only a speed-up: the run exists and the next tick starts it
        log.warning("could not nudge the scheduler for %s/%s", dag_id, run.run_id, exc_info=True)
        # Said to the caller too (HTTP's Warning header; the CLI prints it), who would otherwise wait a tick
        # wondering why the run does not start.
        why = " ".join(f"{type(err).__name__}: {err}".replace('"', "'").split())  # one line, no quote to end it
        headers["Warning"] = f'199 updraft "could not nudge the scheduler ({why}); the run starts at its next tick"'
    _meta, sdag = dag_or_404(call, dag_id)
    return Reply(200, run_response(run, display_name(sdag, dag_id)), headers=headers)



PATCH_BODY = {"state": Field("str"), "note": Field("str", max_length=NOTE_LENGTH)}
CLEAR_BODY = {"dry_run": Field("bool", nullable=False), "only_failed": Field("bool", nullable=False),
              "only_new": Field("bool", nullable=False), "run_on_latest_version": Field("bool"),
              "note": Field("str", max_length=NOTE_LENGTH)}
UNSUPPORTED_CLEAR = {"only_new": "a run is pinned to the DAG version it started with, so no task is new to it",
                     "run_on_latest_version": "a cleared run reruns on the DAG version it started with"}


def _run_reply(call: Call, dag_id: str, run_id: str) -> DAGRunResponse:
    run = run_or_404(call, dag_id, run_id)
    return run_response(run, _dag_names(call, {dag_id})[dag_id])


@routes.patch("/dags/{dag_id}/dagRuns/{dag_run_id}")
def patch_dag_run(call: Call) -> DAGRunResponse:
    """Set a run's note and/or state (only the fields sent, or named in ``update_mask``)."""
    # lazy: cold start (the API's build imports every route module; scheduling only on this route)
    from updraft.scheduling.commands import apply_marks, set_run_state
    from updraft.scheduling.decisions import run_mark

    dag_id, run_id = call.path("dag_id"), call.path("dag_run_id")
    mask = set(call.query.strings("update_mask"))
    call.query.check()
    body = parse_body(call.request.body, PATCH_BODY)
    check_enum(body, "state", MUTABLE_RUN_STATES)
    if mask:
        body = {k: v for k, v in body.items() if k in mask}
    dag_or_404(call, dag_id)
    run = run_or_404(call, dag_id, run_id)
    if "note" in body:
        call.store.set_run_note(dag_id, run_id, body["note"])
    if body.get("state") is not None:
        state = DagRunState(body["state"])
        if state != DagRunState.QUEUED:
            sdag = run_version_or_404(call, run)
            tis = run_instances(call, run, sdag)
            apply_marks(call.store, run_mark(sdag, tis, state, now=call.now()), before={ti.key: ti for ti in tis},
                        waits=call.services.waits)
        set_run_state(call.store, run, state, now=call.now())
        nudge(call, dag_id, [run_id])
    return _run_reply(call, dag_id, run_id)


@routes.delete("/dags/{dag_id}/dagRuns/{dag_run_id}")
def delete_dag_run(call: Call) -> Reply:
    """Delete a queued or finished run with its task instances, recorded tries and XComs (their slots go back)."""
    # lazy: cold start (the API's build imports every route module; scheduling only on this route)
    from updraft.scheduling.commands import delete_run

    dag_id, run_id = call.path("dag_id"), call.path("dag_run_id")
    run = call.store.get_run(dag_id, run_id)
    if run is None:
        raise run_not_found(dag_id, run_id)
    deletable = list(MUTABLE_RUN_STATES)
    if run.state not in deletable or not delete_run(call.store, run, call.store.get_run_tis(dag_id, run_id),
                                                    deletable=deletable, waits=call.services.waits):
        current = call.store.get_run(dag_id, run_id)
        if current is None:
            raise run_not_found(dag_id, run_id)
        raise Conflict(f"The DagRun with dag_id: `{dag_id}` and run_id: `{run_id}` cannot be deleted in "
                       f"{current.state.value} state")
    return Reply(204)


@routes.post("/dags/{dag_id}/dagRuns/{dag_run_id}/clear")
def clear_dag_run(call: Call) -> ClearTaskInstanceCollectionResponse | DAGRunResponse:
    """Clear a run's task instances (all, or ``only_failed``): with ``dry_run`` (the default) the instances that
    would be cleared, else the run as it is after the clear."""
    # lazy: cold start (the API's build imports every route module; scheduling only on this route)
    from updraft.scheduling.commands import apply_resets
    from updraft.scheduling.decisions import Selection, resets, to_clear

    dag_id, run_id = call.path("dag_id"), call.path("dag_run_id")
    body = parse_body(call.request.body, CLEAR_BODY)
    if body.get("only_new") and body.get("only_failed"):
        raise Unprocessable([issue("value_error", ("body",),
                                   "Value error, only_new and only_failed are mutually exclusive", body)])
    refuse(body, UNSUPPORTED_CLEAR)
    dag_or_404(call, dag_id)
    run = run_or_404(call, dag_id, run_id)
    sdag = run_version_or_404(call, run)
    only_failed = bool(body.get("only_failed"))
    if body.get("dry_run", True):
        tis = [ti for ti in run_instances(call, run, sdag) if not only_failed or ti.state in FAILED_TI_STATES]
        return {"task_instances": [ti_response(ti, run, sdag) for ti in tis], "total_entries": len(tis)}
    chosen = to_clear(call.store.get_run_tis(dag_id, run_id), Selection(), only_failed=only_failed)
    apply_resets(call.store, run, resets(sdag, chosen), now=call.now(), waits=call.services.waits)
    if body.get("note") is not None:
        call.store.set_run_note(dag_id, run_id, body["note"])
    nudge(call, dag_id, [run_id])
    return _run_reply(call, dag_id, run_id)
