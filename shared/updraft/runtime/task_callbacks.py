"""Run a task's failure or retry callbacks and email alert on a worker, for a try the scheduler failed.

When a worker goes quiet (a zombie, an execution timeout it did not enforce) the scheduler fails the try, and the
callbacks and alert that the try itself would have run never ran. Airflow's DAG processor then runs them from a
``TaskCallbackRequest`` and an ``EmailRequest``; here one ``TaskCallbackRequest`` does both on a worker
(``updraft.scheduling.dag_callbacks.task_callback_request``): ``on_retry_callback`` and ``email_on_retry`` when
the try will be retried, else ``on_failure_callback`` and ``email_on_failure``, with the try's template context
(Airflow sets no ``exception`` there; the alert's exception is the scheduler's reason). A duplicate delivery runs
nothing; a failing callback is logged. The log is ``@callbacks.<task_id>``'s, at the try's map index and number.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable

from updraft.executors.callback_requests import TaskCallbackRequest
from updraft.runtime.dag_callbacks import load_run_dag, task_instance_context
from updraft.runtime.loader import LocalDagLoader, find_task
from updraft.runtime.logs import LogSink, capture
from updraft.runtime.task_email import send_error_email, wants_email
from updraft.scheduling import claim_callback
from updraft.sdk.exceptions import AirflowException
from updraft.store.api import Store

log = logging.getLogger(__name__)


def run_task_callbacks(request: TaskCallbackRequest, *, store: Store, loader: LocalDagLoader,
                       now_fn: Callable[[], dt.datetime], log_sink: LogSink | None = None) -> bool:
    """Run the request's callbacks and alert once, in this process; False when this delivery was a duplicate
    (nothing ran). A worker claims the request itself and runs :func:`call_task_callbacks` in a credential-less
    child instead (``worker.run_callback_request``)."""
    if not claim_callback(store, request):
        log.info("task callback request %s of %s already ran", request.request_id, request.ti_key.label)
        return False
    call_task_callbacks(request, store=store, loader=loader, now_fn=now_fn, log_sink=log_sink)
    return True


def call_task_callbacks(request: TaskCallbackRequest, *, store: Store, loader: LocalDagLoader,
                        now_fn: Callable[[], dt.datetime], log_sink: LogSink | None = None) -> None:
    """Call the failed try's callbacks and send its alert, for a (claimed) request, logging each."""
    task_log = logging.getLogger("airflow.task")
    name = "on_retry_callback" if request.retried else "on_failure_callback"
    ti_key = request.ti_key
    with capture(log_sink, request.key, request.try_number):
        task_log.info("Running %s of %s try %s, failed by the scheduler: %s", name, ti_key.label,
                      request.try_number, request.message)
        try:
            dag, run, serialized = load_run_dag(ti_key, store=store, loader=loader)
            task = find_task(dag, ti_key.task_id)
            context = task_instance_context(task, ti_key, request.try_number, dag=dag, run=run,
                                            serialized=serialized, store=store, now_fn=now_fn)
        except Exception:
            task_log.exception("Could not load the task to run its %s", name)
            return
        callbacks = getattr(task, name, None) or []
        for callback in callbacks if isinstance(callbacks, (list, tuple)) else [callbacks]:
            task_log.info("Executing task callback %s", getattr(callback, "__name__", type(callback).__name__))
            try:
                callback(context)
            except Exception:
                task_log.exception("Error in %s of task %s", name, task.task_id)
        if wants_email(task, retried=request.retried):
            send_error_email(task, context, AirflowException(request.message))
