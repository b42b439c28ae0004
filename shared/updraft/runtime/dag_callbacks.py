"""Run a DAG's success or failure callbacks on a worker, as Airflow's DAG processor does (``_execute_dag_callbacks``).

The scheduler sends a ``DagCallbackRequest`` when it ends a run (``updraft.scheduling.dag_callbacks``). Here the
worker takes the run's callback fence (a duplicate delivery runs nothing), loads the DAG from the version the run
is pinned to, builds Airflow's context and calls each callback in turn; a failing callback is logged and the next
one still runs; nothing here changes the run's state.

The context is Airflow's: with the request's task instance (its ``last_ti``), the full template context of that
instance (``ti``, ``task``, ``dag_run``, ``logical_date``, ``params``...) plus ``reason``; without one, ``dag``,
``run_id`` and ``reason`` (and ``dag_run``, which Airflow leaves out there but every callback example reads).

The log goes where a try's log goes, under the run's callback key (task id ``@dag_callbacks``, try 1): the log
of the run's latest callbacks, read like a task's log.

The callbacks are user code: a worker claims the request, then runs :func:`call_dag_callbacks` in a child of its
task server, as a try, without the worker's credentials (``worker.run_callback_request``, ``supervisor``).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from typing import Any

from updraft.executors.callback_requests import DagCallbackRequest
from updraft.model.records import DagRun, TIKey
from updraft.runtime.context import RuntimeTaskInstance, build_context
from updraft.runtime.loader import LocalDagLoader, find_task
from updraft.runtime.logs import LogSink, capture
from updraft.runtime.templates import render_object  # noqa: F401 (registers how notifiers render their fields)
from updraft.runtime.xcom import XComClient
from updraft.scheduling import claim_callback
from updraft.sdk.context import Context
from updraft.sdk.exceptions import TaskNotFound
from updraft.store.api import Store

log = logging.getLogger(__name__)


def run_dag_callbacks(request: DagCallbackRequest, *, store: Store, loader: LocalDagLoader,
                      now_fn: Callable[[], dt.datetime], log_sink: LogSink | None = None) -> bool:
    """Run the request's callbacks once, in this process; False when this delivery was a duplicate (nothing ran).
    A worker claims the request itself and runs :func:`call_dag_callbacks` in a credential-less child instead
    (``worker.run_callback_request``)."""
    if not claim_callback(store, request):
        log.info("DAG callback request %s of %s already ran", request.request_id, request.key.run_id)
        return False
    call_dag_callbacks(request, store=store, loader=loader, now_fn=now_fn, log_sink=log_sink)
    return True


def call_dag_callbacks(request: DagCallbackRequest, *, store: Store, loader: LocalDagLoader,
                       now_fn: Callable[[], dt.datetime], log_sink: LogSink | None = None) -> None:
    """Call the DAG's callbacks the (claimed) request names, with Airflow's context, logging each."""
    task_log = logging.getLogger("airflow.task")
    kind = "success" if request.success else "failure"
    with capture(log_sink, request.key, request.try_number):
        task_log.info("Running on_%s_callback of DAG %s for run %s (reason: %s)", kind, request.key.dag_id,
                      request.key.run_id, request.reason)
        try:
            dag, context = _load(request, store=store, loader=loader, now_fn=now_fn)
        except Exception:
            task_log.exception("Could not load the DAG to run its on_%s_callback", kind)
            return
        callbacks = dag.on_success_callback if request.success else dag.on_failure_callback
        if not callbacks:
            task_log.warning("Callback requested, but DAG %s has no on_%s_callback", request.key.dag_id, kind)
            return
        for callback in callbacks if isinstance(callbacks, (list, tuple)) else [callbacks]:
            task_log.info("Executing on_%s dag callback %s", kind, getattr(callback, "__name__", callback))
            try:
                callback(context)
            except Exception:
                task_log.exception("Callback failed")


def _load(request: DagCallbackRequest, *, store: Store, loader: LocalDagLoader,
          now_fn: Callable[[], dt.datetime]) -> tuple[Any, Context]:
    dag, run, serialized = load_run_dag(request.key, store=store, loader=loader)
    return dag, callback_context(request, dag=dag, run=run, serialized=serialized, store=store, now_fn=now_fn)


def load_run_dag(key: TIKey, *, store: Store, loader: LocalDagLoader) -> tuple[Any, DagRun, Any]:
    """The live DAG of the version ``key``'s run is pinned to, with the run and that version."""
    run = store.get_run(key.dag_id, key.run_id)
    if run is None:
        raise RuntimeError(f"run {key.run_id!r} of DAG {key.dag_id!r} not found")
    serialized = store.get_serialized_dag(run.dag_id, run.dag_hash)
    if serialized is None:
        raise RuntimeError(f"version {run.dag_hash!r} of DAG {key.dag_id!r} not found")
    return loader.load_dag(key.dag_id, serialized.relative_fileloc, serialized.file_hash), run, serialized


def callback_context(request: DagCallbackRequest, *, dag: Any, run: DagRun, serialized: Any, store: Store,
                     now_fn: Callable[[], dt.datetime]) -> Context:
    """Airflow's DAG callback context (see the module notes)."""
    minimal = Context({"dag": dag, "run_id": run.run_id, "dag_run": run, "reason": request.reason})
    ti_key = request.ti_key
    if ti_key is None:
        return minimal
    try:
        task = find_task(dag, ti_key.task_id)
    except TaskNotFound:
        # As Airflow: a task removed since the run only costs the context its task, never the callback.
        log.warning("task %s of the callback context no longer exists; running with minimal context",
                    ti_key.task_id)
        return minimal
    context = task_instance_context(task, ti_key, None, dag=dag, run=run, serialized=serialized, store=store,
                                    now_fn=now_fn)
    context["reason"] = request.reason
    return context


def task_instance_context(task: Any, ti_key: TIKey, try_number: int | None, *, dag: Any, run: DagRun,
                          serialized: Any, store: Store, now_fn: Callable[[], dt.datetime]) -> Context:
    """The template context of a task instance's try (the stored one's unless ``try_number`` is given), built
    outside the try for a callback, as Airflow's DAG processor builds it from the instance the request names."""
    stored = store.get_ti(ti_key)
    if try_number is None:
        try_number = stored.try_number if stored else 0
    ti = RuntimeTaskInstance(task=task, dag_id=ti_key.dag_id, run_id=ti_key.run_id, map_index=ti_key.map_index,
                             try_number=try_number, max_tries=task.retries,
                             xcom_client=XComClient(store, ti_key, now_fn), serialized_dag=serialized,
                             hostname=stored.hostname if stored else None,
                             start_date=stored.start_date if stored else None)
    if stored is not None and stored.state is not None:
        ti.state = stored.state.value
    return build_context(ti=ti, task=task, dag=dag, run=run, store=store)
