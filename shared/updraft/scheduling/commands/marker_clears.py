"""Clearing across DAGs: an ``ExternalTaskMarker`` among the instances a clear takes brings its external task, and
that task's downstream tasks, into the clear (Airflow's ``include_dependent_dags`` in ``DAG.clear``).

For each marker cleared, its ``logical_date`` is rendered for the marker's run (its rendered field when a try
recorded one; a marker is an ``EmptyOperator`` and usually never runs, so otherwise its template is rendered with
the run's dates, the values Airflow's ``render_templates`` gives it), and the external DAG's instances of
``external_task_id`` and everything downstream of it in the run at that logical date are added, with the clear's
own state filter. Markers found there are followed in turn. The first marker's ``recursion_depth`` bounds the
depth, and going deeper is an error naming the marker, as in Airflow: a cycle of markers cannot clear forever.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from updraft.model.records import DagRun, TaskInstance
from updraft.scheduling.decisions.clearing import Selection, relatives, to_clear
from updraft.serialization.model import SerializedDAG, SerializedTask
from updraft.store.api import Store

MARKER_TYPE = "ExternalTaskMarker"


class MarkerRecursionError(Exception):
    """Following markers went deeper than the first marker's ``recursion_depth`` (likely a cycle)."""


@dataclass(frozen=True)
class ExternalClear:
    """Instances of another DAG's run that a clear takes because a marker points at them."""

    run: DagRun
    dag: SerializedDAG
    tis: list[TaskInstance]


def is_marker(task: SerializedTask | None) -> bool:
    return task is not None and task.task_type == MARKER_TYPE


def render_marker_field(value: Any, run: DagRun) -> Any:
    """A marker's template field for ``run``: rendered with the run's dates (``logical_date``, ``ds``, ``ts``,
    ``data_interval_*``, ``run_id``, ``dag_run``) in Jinja's sandbox; a value without a template stays as it is."""
    if not isinstance(value, str) or ("{{" not in value and "{%" not in value):
        return value
    from jinja2.sandbox import SandboxedEnvironment

    context: dict[str, Any] = {"run_id": run.run_id, "dag_run": run,
                               "data_interval_start": run.data_interval_start,
                               "data_interval_end": run.data_interval_end}
    if run.logical_date is not None:
        context.update(logical_date=run.logical_date, ds=run.logical_date.strftime("%Y-%m-%d"),
                       ds_nodash=run.logical_date.strftime("%Y%m%d"), ts=run.logical_date.isoformat())
    return SandboxedEnvironment().from_string(value).render(**context)


def _marker_target(task: SerializedTask, ti: TaskInstance, run: DagRun) -> tuple[str, str, dt.datetime]:
    """(external DAG, external task, logical date) of a marker's instance in ``run``."""
    # lazy: cold start (pendulum only when a marker's date is rendered)
    from updraft.timetables._time import coerce_datetime

    fields = dict(task.template_values)
    fields.update({k: v for k, v in (ti.rendered_fields or {}).items() if k in fields})
    dag_id, task_id, when = (render_marker_field(fields.get(name), run)
                             for name in ("external_dag_id", "external_task_id", "logical_date"))
    if isinstance(when, str):
        import pendulum

        when = pendulum.parse(when)
    return str(dag_id), str(task_id), coerce_datetime(when)


def dependent_clears(store: Store, dag: SerializedDAG, run: DagRun, chosen: Iterable[TaskInstance], *,
                     only_failed: bool = False, only_running: bool = False,
                     dag_of: Callable[[DagRun], SerializedDAG | None] | None = None) -> list[ExternalClear]:
    """The other DAGs' instances a clear of ``chosen`` (in ``run`` of ``dag``) also takes, marker by marker.

    ``only_failed`` / ``only_running`` filter them as the clear filters its own; ``dag_of`` gives a run's version
    (default: the one it is pinned to). Raises :class:`MarkerRecursionError` past the depth limit.
    """
    dag_of = dag_of or (lambda r: store.get_serialized_dag(r.dag_id, r.dag_hash))
    found: dict[tuple[str, str], ExternalClear] = {}
    visited: set[tuple[str, str, str, int]] = set()
    max_depth: int | None = None
    pending = [(dag, run, list(chosen), 0)]
    while pending:
        source_dag, source_run, tis, depth = pending.pop()
        for ti in tis:
            task = source_dag.task_dict.get(ti.task_id)
            if not is_marker(task) or (ti.dag_id, ti.run_id, ti.task_id, ti.map_index) in visited:
                continue
            assert task is not None
            visited.add((ti.dag_id, ti.run_id, ti.task_id, ti.map_index))
            if max_depth is None:
                max_depth = int(task.extra.get("recursion_depth") or 10)
            if depth + 1 > max_depth:
                raise MarkerRecursionError(
                    f"Maximum recursion depth {max_depth} reached for {MARKER_TYPE} {ti.task_id}. "
                    "Attempted to clear too many tasks or there may be a cyclic dependency.")
            external_dag_id, external_task_id, when = _marker_target(task, ti, source_run)
            for external_run in store.runs_dated_between(external_dag_id, when, when):
                if external_run.logical_date != when:
                    continue
                external_dag = dag_of(external_run)
                if external_dag is None or external_task_id not in external_dag.task_dict:
                    continue
                task_ids = {external_task_id} | relatives(external_dag, [external_task_id], upstream=False)
                taken = to_clear(store.get_run_tis(external_dag_id, external_run.run_id),
                                 Selection(frozenset(task_ids)), only_failed=only_failed, only_running=only_running)
                key = (external_dag_id, external_run.run_id)
                known = found.get(key)
                merged = {t.key: t for t in [*(known.tis if known else []), *taken]}
                found[key] = ExternalClear(external_run, external_dag,
                                           sorted(merged.values(), key=lambda t: (t.task_id, t.map_index)))
                pending.append((external_dag, external_run, taken, depth + 1))
    return list(found.values())
