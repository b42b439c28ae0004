"""Which scheduled runs are due, what they are called, and the data interval of a manual run.

The scheduler asks the DAG's timetable for the run after the last automated one, with the DAG's
``TimeRestriction`` (start date, end date, catchup), exactly as Airflow's ``DAG.next_dagrun_info`` does; a run is
due once its ``run_after`` has passed. Airflow creates no scheduled run while the DAG's active (queued or
running) runs reach ``max_active_runs``, and at most ``max_dagruns_to_create_per_loop`` per loop; with
``catchup=True`` the timetable hands out every missed interval in turn, with ``catchup=False`` only the latest.

A scheduled run's id is ``generate_run_id(run_type=scheduled, run_after=<logical date>)``, which is what
Airflow 3's scheduler passes (``scheduled__<logical date ISO>`` for the built-in timetables): derived from the
logical date only, so two schedulers creating the same run compute the same id and the second create fails.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from updraft.model.records import DagRun
from updraft.serialization.model import SerializedDAG
from updraft.store.api import DagMeta
from updraft.timetables._time import coerce_datetime, frozen_now
from updraft.timetables.base import DagRunInfo, DagRunType, DataInterval, TimeRestriction, Timetable
from updraft.timetables.evaluated import EvaluatedTimetable, Horizon

MAX_DAGRUNS_TO_CREATE_PER_LOOP = 10


def time_restriction(dag: SerializedDAG) -> TimeRestriction:
    """Airflow's ``DAG._time_restriction``: the earliest start date among the DAG's and its tasks', and the
    latest end date when every task has one."""
    start_dates = [t.start_date for t in dag.tasks if t.start_date]
    if dag.start_date is not None:
        start_dates.append(dag.start_date)
    earliest = coerce_datetime(min(start_dates)) if start_dates else None
    latest = dag.end_date
    end_dates = [t.end_date for t in dag.tasks if t.end_date]
    if dag.tasks and len(end_dates) == len(dag.tasks):
        if dag.end_date is not None:
            end_dates.append(dag.end_date)
        latest = max(end_dates)
    return TimeRestriction(earliest, coerce_datetime(latest) if latest is not None else None, bool(dag.catchup))


def last_automated_interval(source: DataInterval | DagMeta | None) -> DataInterval | None:
    """The last scheduled run's data interval, from a ``DataInterval``, a ``DagMeta`` row, or None (never ran)."""
    if source is None or isinstance(source, DataInterval):
        return source
    start, end = source.last_automated_data_interval_start, source.last_automated_data_interval_end
    if start is None or end is None:
        return None
    return DataInterval(coerce_datetime(start), coerce_datetime(end))


def timetable_of(dag: SerializedDAG, horizon: dict[str, Any] | None) -> Timetable:
    """The timetable to ask: a custom one answers from the horizon the parser evaluated (the DAG row's)."""
    timetable = dag.timetable
    if isinstance(timetable, EvaluatedTimetable) and horizon is not None:
        return timetable.with_horizon(horizon)
    return timetable


def horizon_of(dag: SerializedDAG, horizon: dict[str, Any] | None) -> Horizon | None:
    """The evaluated horizon of a DAG on a custom timetable (None for built-in schedules)."""
    if not isinstance(dag.timetable, EvaluatedTimetable) or horizon is None:
        return None
    return Horizon.from_dict(horizon)


def next_run_info(dag: SerializedDAG, last_automated: DataInterval | DagMeta | None, *,
                  now: dt.datetime, horizon: dict[str, Any] | None = None) -> DagRunInfo | None:
    """The run after ``last_automated`` (a DataInterval, a DagMeta or None), due or not; None when there is none.
    A custom timetable answers from ``horizon``, else from the DagMeta's."""
    if horizon is None and isinstance(last_automated, DagMeta):
        horizon = last_automated.timetable_horizon
    timetable = timetable_of(dag, horizon)
    if timetable is None or not timetable.can_be_scheduled:
        return None
    with frozen_now(now):
        return timetable.next_dagrun_info(last_automated_data_interval=last_automated_interval(last_automated),
                                          restriction=time_restriction(dag))


def next_runs(dag: SerializedDAG, last_automated: DataInterval | DagMeta | None = None, *, now: dt.datetime,
              active_runs: int, max_to_create: int = MAX_DAGRUNS_TO_CREATE_PER_LOOP) -> list[DagRunInfo]:
    """The scheduled runs to create now, oldest first: due (``run_after <= now``), within the room
    ``max_active_runs - active_runs`` leaves, and at most ``max_to_create``."""
    limit = dag.max_active_runs
    if dag.timetable is not None and dag.timetable.active_runs_limit is not None:
        limit = min(limit, dag.timetable.active_runs_limit)
    room = min(limit - active_runs, max_to_create)
    runs: list[DagRunInfo] = []
    last = last_automated_interval(last_automated)
    horizon = last_automated.timetable_horizon if isinstance(last_automated, DagMeta) else None
    while len(runs) < room:
        info = ((_stored_first_run(dag, last_automated) if last is None else None)
                or next_run_info(dag, last, now=now, horizon=horizon))
        if info is None or info.run_after > now:
            break
        if runs and info.run_after <= runs[-1].run_after and info.logical_date <= runs[-1].logical_date:
            break  # the timetable does not move forward (``@continuous`` within one instant)
        runs.append(info)
        last = info.data_interval
    return runs


def _stored_first_run(dag: SerializedDAG, source: DataInterval | DagMeta | None) -> DagRunInfo | None:
    """The first run of a DAG with no start date, as registration stored it (Airflow's ``DagModel.next_dagrun``).

    Without a start date the timetable's answer is the clock's (``@once`` runs "now"): recomputed, each
    scheduler would name a different run; the stored one is the same for all of them.
    """
    if not isinstance(source, DagMeta) or source.next_dagrun_logical_date is None:
        return None
    if time_restriction(dag).earliest is not None:
        return None
    stored = coerce_datetime(source.next_dagrun_logical_date)
    start, end = source.next_dagrun_data_interval_start, source.next_dagrun_data_interval_end
    interval = DataInterval(coerce_datetime(start) if start else stored, coerce_datetime(end) if end else stored)
    run_after = source.next_dagrun_run_after
    return DagRunInfo(run_after=coerce_datetime(run_after) if run_after else stored, data_interval=interval)


def scheduled_run(dag: SerializedDAG, dag_hash: str, info: DagRunInfo, *, now: dt.datetime) -> DagRun:
    """The scheduled run ``info`` describes. A partitioned schedule's run (``CronPartitionTimetable``) is for a
    partition instead of a logical date: as Airflow, its logical date and data interval are None, and its id
    names the partition key."""
    partition_of = getattr(dag.timetable, "partition_of", None)
    if dag.timetable.partitioned and partition_of is not None:
        partition_date, partition_key = partition_of(info.run_after)
        run_id = dag.timetable.generate_run_id(run_type=DagRunType.SCHEDULED, run_after=coerce_datetime(info.run_after),
                                               data_interval=None, partition_key=partition_key)
        return DagRun(dag_id=dag.dag_id, run_id=run_id, run_type="scheduled", dag_hash=dag_hash,
                      run_after=info.run_after, queued_at=now, partition_key=partition_key,
                      partition_date=partition_date)
    return DagRun(dag_id=dag.dag_id, run_id=run_id_for(dag, info), run_type="scheduled", dag_hash=dag_hash,
                  logical_date=info.logical_date, data_interval_start=info.data_interval.start,
                  data_interval_end=info.data_interval.end, run_after=info.run_after, queued_at=now)


def run_id_for(dag: SerializedDAG, info: DagRunInfo) -> str:
    return dag.timetable.generate_run_id(run_type=DagRunType.SCHEDULED,
                                         run_after=coerce_datetime(info.logical_date),
                                         data_interval=info.data_interval)


def manual_run_info(dag: SerializedDAG, run_after: dt.datetime, logical_date: dt.datetime | None = None,
                    horizon: dict[str, Any] | None = None) -> DagRunInfo:
    """A manual run's data interval: ``infer_manual_data_interval`` at its logical date (else at ``run_after``);
    a custom timetable's from ``horizon`` (``ManualIntervalNotEvaluated`` where the parser did not evaluate it)."""
    when = coerce_datetime(logical_date if logical_date is not None else run_after)
    interval = timetable_of(dag, horizon).infer_manual_data_interval(run_after=when)
    return DagRunInfo(run_after=coerce_datetime(run_after), data_interval=interval)
