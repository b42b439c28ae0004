"""Backfills as the API and CLI make and change them: create (or dry-run), pause, unpause and cancel.

Creation checks what Airflow's ``_create_backfill`` checks, with its messages: the DAG exists (else
:class:`DagNotFound`), has a periodic schedule, has no other active backfill (:class:`AlreadyRunningBackfill`),
the dates are in order and not both in the future, a DAG with ``depends_on_past`` tasks is neither run
backwards nor left with reprocess ``none``, and the conf passes the DAG's params (all :class:`InvalidBackfill`).
Then it fixes the plan's skipped dates from the runs that exist, and stores the backfill; the scheduler creates
its runs (:mod:`updraft.scheduling.backfill_pass`).

Where the reprocess behaviour covers a date's finished run, Airflow's ``_handle_clear_run`` clears that run (every
task instance, the run back to queued) rather than creating a second run of the date; Updraft does the same, before
it stores the backfill, and leaves the date out of the plan (``skipped`` keeps it as ``cleared``). A request
repeated after a timeout finds that run queued or running and skips it as in flight: it is cleared once. Unlike
Airflow the cleared run keeps its run type, conf and ``max_active_runs`` slot (the DAG's, not the backfill's), so a
``dag_run_conf`` that such a run would have to take is refused (:class:`RerunKeepsConf`, naming the runs) rather
than ignored.

Cancel is Airflow's: the backfill is paused (no new runs), its queued runs fail, running ones finish, and it is
completed at once.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from updraft.limits import resize
from updraft.model.backfills import DEFAULT_MAX_ACTIVE_RUNS, Backfill, ReprocessBehavior
from updraft.model.limits import backfill_runs_limit
from updraft.model.records import DagRun
from updraft.model.states import DagRunState, DagRunType
from updraft.scheduling.commands.manual_changes import apply_resets
from updraft.scheduling.commands.triggering import _validate_conf
from updraft.scheduling.dag_versions import pinned_dag
from updraft.scheduling.decisions.backfills import CLEARED, date_key, infos_between, latest_by_date, skip_reason
from updraft.scheduling.decisions.clearing import Selection, resets, to_clear
from updraft.scheduling.holding import limits_table
from updraft.scheduling.run_slots import set_state_releasing
from updraft.sdk.exceptions import AirflowBadRequest, AirflowException, DagNotFound, ParamValidationError
from updraft.serialization.model import SerializedDAG
from updraft.store.api import Store
from updraft.timetables.base import DagRunInfo
from updraft.timetables.evaluated import EvaluatedTimetable


class InvalidBackfill(AirflowException):
    """A request Airflow answers with its validation error (422): the schedule, dates, direction, reprocess
    behaviour or conf does not allow the backfill."""


class AlreadyRunningBackfill(AirflowException):
    """The DAG has an active backfill (409)."""


class RerunKeepsConf(AirflowBadRequest):
    """The backfill would rerun existing runs with a conf they cannot take (400)."""


class BackfillNotFound(AirflowException):
    """No backfill has this id (404)."""


class BackfillCompleted(AirflowException):
    """The backfill has completed (or was cancelled): it cannot change (409)."""


@dataclass(frozen=True)
class BackfillRequest:
    """Airflow's ``BackfillPostBody``, with dates made aware (a naive one is UTC, as Airflow coerces it)."""

    dag_id: str
    from_date: dt.datetime
    to_date: dt.datetime
    run_backwards: bool = False
    dag_run_conf: dict[str, Any] | None = None
    reprocess_behavior: ReprocessBehavior = ReprocessBehavior.NONE
    max_active_runs: int = DEFAULT_MAX_ACTIVE_RUNS


def create_backfill(store: Store, request: BackfillRequest, *, now: dt.datetime,
                    triggering_user_name: str | None = None) -> Backfill:
    dag_hash, dag = _backfillable_dag(store, request.dag_id)
    if store.active_backfill_id(request.dag_id) is not None:
        raise _already_running(request.dag_id)
    infos = _checked_infos(store, dag, request, now=now)
    if not infos:
        raise InvalidBackfill(f"No runs to create for Dag {request.dag_id} in the range "
                              f"[{request.from_date}, {request.to_date}]")
    skipped, reruns = _existing(store, request, infos)
    for key, run in reruns.items():
        _clear_run(store, run, now=now)
        skipped[key] = CLEARED
    backfill = Backfill(id=store.next_backfill_id(), dag_id=request.dag_id, from_date=request.from_date,
                        to_date=request.to_date, dag_hash=dag_hash, created_at=now, updated_at=now,
                        dag_run_conf=dict(request.dag_run_conf or {}),
                        reprocess_behavior=request.reprocess_behavior, max_active_runs=request.max_active_runs,
                        run_backwards=request.run_backwards, triggering_user_name=triggering_user_name,
                        skipped=skipped)
    if not store.create_backfill(backfill):
        raise _already_running(request.dag_id)
    resize(limits_table(store), backfill_runs_limit(request.dag_id), request.max_active_runs)
    return backfill


def dry_run(store: Store, request: BackfillRequest, *, now: dt.datetime) -> list[DagRunInfo]:
    """The runs creating the backfill would make, in order (Airflow's ``_do_dry_run``)."""
    _, dag = _backfillable_dag(store, request.dag_id)
    infos = _checked_infos(store, dag, request, now=now)
    skipped, _ = _existing(store, request, infos)
    return [i for i in infos if date_key(i.logical_date) not in skipped]


def set_paused(store: Store, backfill_id: int, paused: bool, *, now: dt.datetime) -> Backfill:
    _active_or_raise(store, backfill_id)
    if not store.set_backfill_paused(backfill_id, paused, now=now):
        _active_or_raise(store, backfill_id)  # completed meanwhile: say so
    return _active_or_raise(store, backfill_id, allow_completed=True)


def cancel(store: Store, backfill_id: int, *, now: dt.datetime) -> Backfill:
    backfill = _active_or_raise(store, backfill_id)
    store.set_backfill_paused(backfill_id, True, now=now)  # first, so no scheduler creates another run
    # Its queued runs fail, giving back their slots (one backfill of a DAG is active at a time: every queued
    # backfill run of the DAG is this one's).
    for run in store.list_runs(backfill.dag_id):
        if run.run_type == DagRunType.BACKFILL and run.state == DagRunState.QUEUED:
            set_state_releasing(store, run, expected=[DagRunState.QUEUED], state=DagRunState.FAILED, now=now)
    store.complete_backfill(backfill_id, now=now, pause=True)
    return _active_or_raise(store, backfill_id, allow_completed=True)


def _active_or_raise(store: Store, backfill_id: int, *, allow_completed: bool = False) -> Backfill:
    backfill = store.get_backfill(backfill_id)
    if backfill is None:
        raise BackfillNotFound("Backfill not found")
    if backfill.completed_at is not None and not allow_completed:
        raise BackfillCompleted("Backfill is already completed.")
    return backfill


def _already_running(dag_id: str) -> AlreadyRunningBackfill:
    return AlreadyRunningBackfill(f"There is already a running backfill for dag {dag_id}")


def _backfillable_dag(store: Store, dag_id: str) -> tuple[str, SerializedDAG]:
    meta = store.get_dag_meta(dag_id)
    if meta is None or not meta.is_active:
        raise DagNotFound(f"Could not find dag {dag_id}")
    dag = pinned_dag(store, dag_id, meta.dag_hash)
    if not dag.timetable.periodic or not dag.timetable.can_be_scheduled:
        raise InvalidBackfill(f"{dag_id} has a non-periodic schedule that does not support backfills")
    if dag.timetable.partitioned:  # Airflow backfills these by partition date (iter_partition_dagrun_infos)
        raise InvalidBackfill(f"{dag_id} has a partitioned schedule: backfilling partitions is not implemented in "
                              "Updraft yet; trigger a run per partition with its partition_key instead")
    if isinstance(dag.timetable, EvaluatedTimetable):
        raise InvalidBackfill(f"backfills of {dag_id} are not supported in Updraft: its custom timetable "
                              f"{dag.timetable.timetable} runs only in the parser, which evaluates the runs ahead "
                              "and not those of a past date range")
    return meta.dag_hash, dag


def _checked_infos(store: Store, dag: SerializedDAG, request: BackfillRequest, *,
                   now: dt.datetime) -> list[DagRunInfo]:
    """Airflow's ``_validate_backfill_params``, then the range's runs."""
    if request.from_date > request.to_date:
        raise InvalidBackfill(f"from_date ({request.from_date.isoformat()}) must not be after to_date "
                              f"({request.to_date.isoformat()}).")
    if request.from_date >= now and request.to_date >= now:
        raise InvalidBackfill("Backfill cannot be executed for future dates.")
    if any(t.depends_on_past for t in dag.tasks):
        if request.run_backwards:
            raise InvalidBackfill("Backfill cannot be run in reverse when the Dag has tasks where "
                                  "depends_on_past=True.")
        if request.reprocess_behavior == ReprocessBehavior.NONE:
            raise InvalidBackfill("Dag has tasks for which depends_on_past=True. You must set reprocess behavior "
                                  "to reprocess completed or reprocess failed.")
    if request.dag_run_conf is not None:
        try:
            _validate_conf(dag, dict(request.dag_run_conf))
        except ParamValidationError as err:
            raise InvalidBackfill(str(err)) from None
    return infos_between(dag, request.from_date, request.to_date, now=now, reverse=request.run_backwards)


def _existing(store: Store, request: BackfillRequest, infos: list[DagRunInfo]
              ) -> tuple[dict[str, str], dict[str, DagRun]]:
    """The dates whose latest run the backfill leaves alone, with Airflow's reason, and the finished runs it
    reruns by clearing them (refused when a conf was asked for: they keep theirs)."""
    dates = [i.logical_date for i in infos]
    latest = latest_by_date(store.runs_dated_between(request.dag_id, min(dates), max(dates))) if dates else {}
    skipped: dict[str, str] = {}
    reruns: dict[str, DagRun] = {}
    for info in infos:
        key = date_key(info.logical_date)
        run = latest.get(key)
        if run is None:
            continue
        reason = skip_reason(run, request.reprocess_behavior)
        if reason is None:
            reruns[key] = run
        else:
            skipped[key] = str(reason)
    if reruns and request.dag_run_conf:
        raise RerunKeepsConf(
            f"reprocess_behavior '{request.reprocess_behavior}' reruns the existing runs "
            f"{', '.join(r.run_id for r in reruns.values())} by clearing them, and a cleared run keeps its own conf: "
            f"Updraft cannot give them dag_run_conf; leave dag_run_conf out or backfill other dates")
    return skipped, reruns


def _clear_run(store: Store, run: DagRun, *, now: dt.datetime) -> None:
    """Airflow's ``dag.clear(run_id=...)`` for a rerun: every task instance reset, the run back to queued."""
    dag = pinned_dag(store, run.dag_id, run.dag_hash)
    apply_resets(store, run, resets(dag, to_clear(store.get_run_tis(run.dag_id, run.run_id), Selection())),
                 now=now)
    if run.state != DagRunState.QUEUED:  # a run with no task instance written has nothing to reset: requeue it
        store.set_run_state(run.dag_id, run.run_id, expected=[run.state], state=DagRunState.QUEUED, now=now)
