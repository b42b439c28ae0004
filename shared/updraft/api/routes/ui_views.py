"""What the web UI's views draw that no single REST route answers, one route per view, as Airflow's private
``/ui/`` API has them (``ui/dashboard/historical_metrics_data``, ``ui/calendar/{dag_id}``,
``ui/gantt/{dag_id}/{run_id}``, same answers): a view is then a constant number of requests whatever the run count.

Served under ``/api/v2/ui/...`` (so at ``/ui/api/v2/ui/...`` through the UI's session): Updraft's ``/ui/`` paths
are the web UI's session (:mod:`updraft.api.auth.session`). They read runs and task instances, so they need what
a DAG read needs (the ``ui`` segment is a DAG resource in :mod:`updraft.api.auth.policy`).
"""

from __future__ import annotations

import collections
import datetime as dt
from typing import Any

from updraft.api.formats import iso
from updraft.api.lookups import dag_or_404, run_or_404
from updraft.api.routes.task_instances import run_dag, run_instances
from updraft.api.routing import Call, RouteTable
from updraft.model.records import TIKey
from updraft.model.states import API_TI_STATES, DagRunState

routes = RouteTable()



@routes.get("/ui/dashboard/historical_metrics_data")
def historical_metrics(call: Call) -> dict[str, Any]:
    """How many runs, and task instances of those runs, are in each state, of the runs due (``run_after``) in
    [start_date, end_date] (end: now): Airflow's ``HistoricalMetricDataResponse``, every state listed."""
    start = call.query.datetime("start_date")
    end = call.query.datetime("end_date") or call.now()
    call.query.check()
    runs = [run for meta in call.store.list_dags() for run in call.store.list_runs(meta.dag_id)
            if run.run_after is not None and (start is None or run.run_after >= start) and run.run_after <= end]
    run_counts = collections.Counter(run.state.value for run in runs)
    ti_counts: collections.Counter[str] = collections.Counter()
    for run in runs:
        ti_counts.update(ti.state.value if ti.state is not None else "no_status"
                         for ti in run_instances(call, run, run_dag(call, run)))
    return {"dag_run_states": {state: run_counts[state] for state in DagRunState},
            "task_instance_states": {"no_status": ti_counts["no_status"],
                                     **{state: ti_counts[state] for state in API_TI_STATES}},
            "dag_run_counts_are_lower_bounds": False, "task_instance_counts_are_lower_bounds": False}


@routes.get("/ui/calendar/{dag_id}")
def calendar(call: Call) -> dict[str, Any]:
    """The DAG's runs counted by day (``granularity=daily``, the default) or hour and state: Airflow's
    ``CalendarTimeRangeCollectionResponse``. A run is placed at its logical date, or when it was due when it has
    none (a manual or asset-triggered run); ``logical_date_gte``/``_lte`` bound that time."""
    dag_id = call.path("dag_id")
    hourly = call.query.choices("granularity", frozenset({"hourly", "daily"})) == ["hourly"]
    low, high = call.query.datetime("logical_date_gte"), call.query.datetime("logical_date_lte")
    call.query.check()
    dag_or_404(call, dag_id)
    counts: collections.Counter[tuple[dt.datetime, str]] = collections.Counter()
    for run in call.store.list_runs(dag_id):
        when = run.logical_date or run.run_after
        if when is None or (low is not None and when < low) or (high is not None and when > high):
            continue
        slot = when.astimezone(dt.UTC).replace(minute=0, second=0, microsecond=0)
        counts[(slot if hourly else slot.replace(hour=0), run.state.value)] += 1
    rows = [{"date": iso(when), "state": state, "count": n} for (when, state), n in sorted(counts.items())]
    return {"total_entries": len(rows), "dag_runs": rows}


@routes.get("/ui/gantt/{dag_id}/{run_id}")
def gantt(call: Call) -> dict[str, Any]:
    """Every try of every task instance of the run, with when it was queued, started and ended: Airflow's
    ``GanttResponse`` (a try waiting to retry is listed once, as its recorded try)."""
    dag_id, run_id = call.path("dag_id"), call.path("run_id")
    dag_or_404(call, dag_id)
    run = run_or_404(call, dag_id, run_id)
    sdag = run_dag(call, run)
    tasks = {task.task_id: task for task in getattr(sdag, "tasks", [])}
    out = []
    def started_first(ti: Any) -> tuple[Any, ...]:
        return ti.start_date is None, iso(ti.start_date) or "", ti.task_id, ti.map_index

    for ti in sorted(run_instances(call, run, sdag), key=started_first):
        recorded = call.store.get_tries(TIKey(dag_id, run_id, ti.task_id, ti.map_index)) if ti.try_number else []
        numbers = {t.try_number for t in recorded}
        tries = [*recorded, *([] if ti.try_number in numbers else [ti])]
        task = tasks.get(ti.task_id)
        name = (task.task_display_name if task is not None else None) or ti.task_id
        for one in tries:
            out.append({"task_id": one.task_id, "task_display_name": name, "map_index": one.map_index,
                        "try_number": one.try_number,
                        "state": one.state.value if one.state is not None else None, "scheduled_dttm": None,
                        "queued_dttm": iso(one.queued_at), "start_date": iso(one.start_date),
                        "end_date": iso(one.end_date), "is_group": False, "is_mapped": one.map_index >= 0})
    return {"dag_id": dag_id, "run_id": run_id, "task_instances": out}
