"""A backfill's decisions, pure: its plan, what an existing run of a date means for it, and the next step.

As Airflow 3 (``airflow.models.backfill``): the plan is the DAG's timetable between the dates (every interval,
as ``catchup=True`` would hand them out) whose data interval had ended when the backfill was made, newest first
with ``run_backwards``. A date whose latest run is still queued or running is skipped ("in flight"); a finished
one is skipped ("already exists") unless ``reprocess_behavior`` asks to rerun it (``failed``: a failed run;
``completed``: any): then the backfill clears that run, as Airflow does, and the plan leaves the date out too
(:data:`CLEARED`), so the date never gets a second run. A run is named as Airflow's ``DagRun.generate_run_id``
names a backfill run: ``backfill__<run_after ISO>``, the same for every scheduler, so a second create of it fails.

The step: at most ``max_active_runs`` of the backfill's runs are queued or running at once (the slots of its
limit, held from creation to the end of each run); a paused backfill creates nothing; once every entry of the
plan is a run and none still holds a slot, the backfill is complete.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

from updraft.model.backfills import Backfill, ReprocessBehavior, SkipReason
from updraft.model.limits import backfill_runs_limit, dag_runs_limit
from updraft.model.records import DagRun
from updraft.model.states import FINISHED_RUN_STATES, DagRunState, DagRunType
from updraft.serialization.model import SerializedDAG
from updraft.store.lru import LruCache
from updraft.timetables._time import coerce_datetime, frozen_now
from updraft.timetables.base import DagRunInfo, TimeRestriction

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
CLEARED = "cleared"  # a ``skipped`` date whose existing run the backfill cleared to rerun it
# Plans of the backfills this process drives (few are active at once); shared, read-only.
_plans: LruCache[tuple[object, ...], list[DagRunInfo]] = LruCache(16)


def date_key(when: dt.datetime) -> str:
    """A logical date as the plan's ``skipped`` map keys it: ISO 8601 in UTC."""
    return when.astimezone(dt.UTC).isoformat()


def infos_between(dag: SerializedDAG, from_date: dt.datetime, to_date: dt.datetime, *, now: dt.datetime,
                  reverse: bool = False) -> list[DagRunInfo]:
    """Airflow's ``_get_info_list``: the timetable's runs with a logical date in [from, to] whose data interval
    ended before ``now``, oldest first (newest first with ``reverse``)."""
    restriction = TimeRestriction(coerce_datetime(from_date), coerce_datetime(to_date), catchup=True)
    infos: list[DagRunInfo] = []
    last = None
    with frozen_now(now):
        while (info := dag.timetable.next_dagrun_info(last_automated_data_interval=last,
                                                      restriction=restriction)) is not None:
            if infos and info.logical_date <= infos[-1].logical_date:
                break  # the timetable does not move forward
            infos.append(info)
            last = info.data_interval
    due = [i for i in infos if i.data_interval.end < now]
    return due[::-1] if reverse else due


def plan(dag: SerializedDAG, backfill: Backfill) -> list[DagRunInfo]:
    """The runs the backfill makes, in order: computed from its pinned DAG version and creation time (so the
    same list every time), less the dates it skipped. Kept per process, keyed by everything it depends on: a
    year of hourly runs takes the timetable seconds to list, and the scheduler asks on every tick."""
    key = (backfill.dag_id, backfill.dag_hash, backfill.id, backfill.from_date, backfill.to_date,
           backfill.created_at, backfill.run_backwards, frozenset(backfill.skipped))
    planned = _plans.get(key)
    if planned is None:
        infos = infos_between(dag, backfill.from_date, backfill.to_date, now=backfill.created_at,
                              reverse=backfill.run_backwards)
        planned = [i for i in infos if date_key(i.logical_date) not in backfill.skipped]
        _plans.put(key, planned)
    return planned


def skip_reason(run: DagRun, reprocess: ReprocessBehavior) -> SkipReason | None:
    """Airflow's ``_get_dag_run_no_create_reason``: why a date whose latest run is ``run`` gets no new run (None:
    the backfill reruns it)."""
    if run.state not in FINISHED_RUN_STATES:
        return SkipReason.IN_FLIGHT
    if reprocess == ReprocessBehavior.NONE:
        return SkipReason.ALREADY_EXISTS
    if reprocess == ReprocessBehavior.FAILED and run.state != DagRunState.FAILED:
        return SkipReason.ALREADY_EXISTS
    return None


def latest_by_date(runs: Iterable[DagRun]) -> dict[str, DagRun]:
    """Each logical date's latest run, as Airflow picks it: the last started, else one never started."""
    latest: dict[str, DagRun] = {}
    for run in sorted(runs, key=lambda r: (r.start_date is not None, r.start_date or _EPOCH)):
        if run.logical_date is not None:
            latest[date_key(run.logical_date)] = run
    return latest


def run_id_for(info: DagRunInfo) -> str:
    return f"{DagRunType.BACKFILL.value}__{info.run_after.isoformat()}"


def backfill_run(backfill: Backfill, info: DagRunInfo, *, now: dt.datetime) -> DagRun:
    """The queued run of one plan entry, pinned to the version the plan came from, with the backfill's conf."""
    return DagRun(dag_id=backfill.dag_id, run_id=run_id_for(info), run_type=DagRunType.BACKFILL.value,
                  dag_hash=backfill.dag_hash, state=DagRunState.QUEUED, logical_date=info.logical_date,
                  data_interval_start=info.data_interval.start, data_interval_end=info.data_interval.end,
                  run_after=info.run_after, conf=dict(backfill.dag_run_conf), queued_at=now)


@dataclass(frozen=True)
class BackfillStep:
    create: list[DagRunInfo]  # the next entries of the plan to make into runs, in order
    complete: bool = False


def next_step(backfill: Backfill, planned: list[DagRunInfo], *, active_runs: int) -> BackfillStep:
    """What a scheduler pass does for ``backfill`` while ``active_runs`` of its runs hold slots."""
    if not backfill.is_active:
        return BackfillStep([])
    remaining = planned[backfill.created:]
    if not remaining:
        return BackfillStep([], complete=active_runs == 0)
    if backfill.is_paused:
        return BackfillStep([])
    return BackfillStep(remaining[:max(backfill.max_active_runs - active_runs, 0)])


def run_limit(run: DagRun) -> str:
    """The limit a run holds while running: its backfill's for a backfill run (which Airflow does not count
    against the DAG's max_active_runs), else the DAG's max_active_runs."""
    return backfill_runs_limit(run.dag_id) if run.run_type == DagRunType.BACKFILL else dag_runs_limit(run.dag_id)
