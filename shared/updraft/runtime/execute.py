"""Run one try of a task and say how it ended (a ``TryResult``), as Airflow's task runner does.

Outcomes: the task returns -> success (its result pushed as XCom); ``AirflowSkipException`` -> skipped;
``AirflowFailException`` or ``AirflowSensorTimeout`` -> failed with ``force_fail`` (no retry); anything else,
including a failure to load the DAG or render templates, -> failed, and ``finish_try`` decides between
up_for_retry and failed from the task's retries; ``execution_timeout`` -> failed with a message saying so.

Timeouts: in the main thread (a Lambda or Fargate worker) a SIGALRM timer interrupts the task, even inside a
blocking system call. In any other thread (local mode runs tries in threads) a watchdog raises
``AirflowTaskTimeout`` asynchronously in the task's thread; that exception is delivered when the thread next runs
Python code, so a task blocked inside C code times out only when the call returns. BashOperator kills its process
group when the exception reaches it.
"""

from __future__ import annotations

import contextlib
import copy
import ctypes
import datetime as dt
import logging
import os
import signal
import threading
import traceback
from collections.abc import Callable, Iterator
from typing import Any, TypeVar, cast

from updraft.executors.base import Dispatch
from updraft.model.records import DagRun, TaskInstance
from updraft.model.states import TaskInstanceState
from updraft.runtime.assets import install_asset_context, keep_outlet_events
from updraft.runtime.context import RuntimeTaskInstance, build_context
from updraft.runtime.cross_dag import CrossDag
from updraft.runtime.deferral import deferral_of, resume, resume_point, start_trigger
from updraft.runtime.loader import LocalDagLoader, find_task
from updraft.runtime.logs import LogSink, capture
from updraft.runtime.operator_links import persist_links
from updraft.runtime.rendered_fields import record_rendered_fields
from updraft.runtime.secrets import prepare_secrets
from updraft.runtime.state_stores import install_state_stores
from updraft.runtime.store_proxy import StoreProxy
from updraft.runtime.task_email import send_error_email, wants_email
from updraft.runtime.templates import is_native, render_task, template_env
from updraft.runtime.try_dag import TryDag, try_dag
from updraft.runtime.xcom import XComClient, XComSerializationError, push_result
from updraft.scheduling import TryResult
from updraft.scheduling.decisions import will_retry
from updraft.sdk._internal.backends import try_cache
from updraft.sdk.context import set_current_context
from updraft.sdk.exceptions import (
    AirflowFailException,
    AirflowRescheduleException,
    AirflowSensorTimeout,
    AirflowSkipException,
    AirflowTaskTimeout,
    TaskDeferralError,
    TaskDeferred,
)
from updraft.sdk.execution import context_env_vars
from updraft.sdk.timezone import convert_to_utc, try_clock
from updraft.secrets.masker import redact_text
from updraft.serialization.model import SerializedDAG
from updraft.store.api import Store

_T = TypeVar("_T")


@contextlib.contextmanager
def execution_timeout(timeout: dt.timedelta | None, task_id: str) -> Iterator[None]:
    """Raise ``AirflowTaskTimeout`` in this thread once ``timeout`` has passed (see the module notes)."""
    if not timeout or timeout.total_seconds() <= 0:
        yield
        return
    seconds = timeout.total_seconds()
    message = f"Task {task_id!r} timed out after {seconds:g} seconds (execution_timeout={timeout})"
    if threading.current_thread() is threading.main_thread():
        def on_alarm(signum: int, frame: Any) -> None:
            raise AirflowTaskTimeout(message)

        previous = signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        return
    thread_id = threading.get_ident()
    done = threading.Event()
    lock = threading.Lock()
    fired: list[bool] = []

    def watchdog() -> None:
        if done.wait(seconds):
            return
        with lock:  # never fire once the task's block has ended
            if not done.is_set():
                fired.append(True)
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(_Timeout))

    watcher = threading.Thread(target=watchdog, name=f"timeout-{task_id}", daemon=True)
    watcher.start()
    try:
        yield
    except _Timeout:
        raise AirflowTaskTimeout(message) from None
    finally:
        with lock:
            done.set()
            if fired:  # fired but not delivered yet (the block ended first): withdraw it
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), None)
        watcher.join()


class _Timeout(AirflowTaskTimeout):
    """Raised asynchronously by the watchdog (must be constructible without arguments)."""


def run_try(dispatch: Dispatch, *, store: Store, loader: LocalDagLoader, now_fn: Callable[[], dt.datetime],
            log_sink: LogSink | None = None, hostname: str | None = None, run: DagRun | None = None,
            nudge: Callable[[str, str], Any] | None = None, started: TaskInstance | None = None) -> TryResult:
    """Load, build, render and execute one try; never raises for anything the task does.

    The task's callbacks run as Airflow runs them, in the try and logged with it: ``on_execute_callback``
    before ``execute``, then ``on_success_callback``, ``on_skipped_callback``, or with ``context["exception"]``
    set ``on_retry_callback`` (the try will be retried) or ``on_failure_callback``, then the
    ``email_on_retry`` / ``email_on_failure`` alert (``task_email``). A failing callback is logged and changes
    nothing. ``nudge(dag_id, run_id)`` asks the scheduler to look at a run the task triggered.

    ``started`` is the instance as its try started: a try resumed after a deferral runs its ``next_method``
    (``runtime.deferral``) instead of ``execute``; a try that defers returns a ``deferred`` result; a
    reschedule-mode sensor's next poke sees its reschedules so far. ``now_fn`` is the try's clock: the SDK's
    ``timezone.utcnow()`` reads it while the task runs.
    """
    key = dispatch.key
    state: dict[str, Any] = {}
    point = resume_point(started)
    with capture(log_sink, key, dispatch.try_number) as buffer, try_cache(), try_clock(now_fn):
        if point is not None and log_sink is not None:  # a resumed try's log goes on from its deferral, as Airflow's
            buffer.write(log_sink.read(key, dispatch.try_number) or "")
        elif started is not None and started.reschedule_count and log_sink is not None:
            _keep_earlier_pokes(buffer, log_sink.read(key, dispatch.try_number))
        try:
            prepare_secrets(store)
            result = _run(dispatch, store=store, loader=loader, now_fn=now_fn, hostname=hostname, state=state,
                          run=run, nudge=nudge, point=point, started=started)
            _callbacks(state, "on_success_callback")
            return result
        except AirflowRescheduleException as exc:
            # Not an end: the try gives back its worker and slots, and the scheduler claims it again (same
            # try_number) at reschedule_date. No callbacks, as in Airflow.
            return _rescheduled(buffer, exc.reschedule_date)
        except AirflowSkipException as exc:
            _log(buffer, f"Skipping task: {exc}")
            _callbacks(state, "on_skipped_callback")
            return TryResult(TaskInstanceState.SKIPPED, note=redact_text(str(exc)) or None)
        except (AirflowFailException, AirflowSensorTimeout) as exc:
            _log(buffer, traceback.format_exc())
            _failure_callbacks(state, exc, dispatch.try_number, force_fail=True)
            return TryResult(TaskInstanceState.FAILED, force_fail=True,
                             note=redact_text(f"{type(exc).__name__}: {exc}"))
        except AirflowTaskTimeout as exc:
            _log(buffer, traceback.format_exc())
            force_fail, delay = _policy_outcome(state, exc, dispatch.try_number)
            _failure_callbacks(state, exc, dispatch.try_number, force_fail=force_fail)
            return TryResult(TaskInstanceState.FAILED, note=redact_text(str(exc)), force_fail=force_fail,
                             retry_delay=delay)
        except TaskDeferred as exc:
            try:
                deferral = deferral_of(exc, task_id=key.task_id, now=now_fn(), task=state.get("task"))
            except (TaskDeferralError, XComSerializationError) as refused:
                # A wait Updraft cannot run fails now (no retry helps), instead of waiting forever.
                _log(buffer, str(refused))
                _failure_callbacks(state, refused, dispatch.try_number, force_fail=True)
                return TryResult(TaskInstanceState.FAILED, force_fail=True, note=redact_text(str(refused))[:1000])
            _log(buffer, f"Pausing task as DEFERRED. dag_id={key.dag_id}, task_id={key.task_id}, "
                         f"run_id={key.run_id}; trigger {deferral.classpath} resumes it at "
                         f"{deferral.resume_at.isoformat()}")
            return TryResult(TaskInstanceState.DEFERRED, deferral=deferral)
        except (Exception, SystemExit) as exc:  # sys.exit() in task code is a failure, as in Airflow
            _log(buffer, traceback.format_exc())
            force_fail, delay = _policy_outcome(state, exc, dispatch.try_number)
            _failure_callbacks(state, exc, dispatch.try_number, force_fail=force_fail)
            return TryResult(TaskInstanceState.FAILED, note=redact_text(f"{type(exc).__name__}: {exc}")[:1000],
                             force_fail=force_fail, retry_delay=delay)


def _rescheduled(buffer: Any, when: Any) -> TryResult:
    """The result of a poke that asked to be rescheduled; a reschedule_date that is no datetime fails the try."""
    if not isinstance(when, dt.datetime):
        message = f"AirflowRescheduleException: reschedule_date must be a datetime, got {when!r}"
        _log(buffer, message)
        return TryResult(TaskInstanceState.FAILED, note=message[:1000])
    when = convert_to_utc(when)  # a naive date is UTC, as Airflow's timezone helpers read it
    _log(buffer, f"Rescheduling task, marking task as UP_FOR_RESCHEDULE (next poke at {when.isoformat()})")
    return TryResult(TaskInstanceState.UP_FOR_RESCHEDULE, reschedule_date=when)


def _record_after_execution(store: Store, dispatch: Dispatch, task: Any) -> None:
    """Airflow's finalize for a task with ``overwrite_rtif_after_execution``: its fields recorded again as the try
    ends, whatever its outcome; a failure to is logged, never the try's (as Airflow logs it)."""
    try:
        record_rendered_fields(store, dispatch, task)
    except Exception:
        logging.getLogger("airflow.task").exception("Failed to set rendered fields during finalization")


def _callbacks(state: dict[str, Any], name: str) -> None:
    task, context = state.get("task"), state.get("context")
    if task is None or context is None:
        return  # the try failed before there was a task to call back
    callbacks = getattr(task, name, None)
    if not callbacks:
        return
    for callback in callbacks if isinstance(callbacks, (list, tuple)) else [callbacks]:
        try:
            callback(context)
        except Exception:
            logging.getLogger("airflow.task").exception("Error in %s of task %s", name, task.task_id)


def _policy_outcome(state: dict[str, Any], exc: BaseException, try_number: int) -> tuple[bool, dt.timedelta | None]:
    """(fail without retrying, this retry's delay) as the task's ``retry_policy`` decides; no policy: (False, None)."""
    # lazy: cold start (retry policies only for a task that has one)
    from updraft.sdk.retry_policy import RetryAction, evaluate_retry_policy

    task = state.get("task")
    decision = evaluate_retry_policy(task, exc, try_number, state.get("context")) if task is not None else None
    if decision is None or decision.action == RetryAction.DEFAULT:
        return False, None
    if decision.action == RetryAction.FAIL:
        return True, None
    return False, decision.retry_delay


def _failure_callbacks(state: dict[str, Any], exc: BaseException, try_number: int, *, force_fail: bool) -> None:
    task, context = state.get("task"), state.get("context")
    if task is None or context is None:
        return
    context["exception"] = exc
    retried = will_retry(task, try_number, force_fail=force_fail)
    _callbacks(state, "on_retry_callback" if retried else "on_failure_callback")
    if wants_email(task, retried=retried):
        send_error_email(task, context, exc)


# A reschedule-mode sensor's try log holds its pokes one after the other (Airflow appends them to the try's log).
# The sinks write a try's log whole at every poke (CloudWatch keeps each delivery), so only the latest pokes are
# carried over: a week of pokes a minute apart must not write gigabytes.
EARLIER_POKES_KEPT = 16 * 1024


def _keep_earlier_pokes(buffer: Any, earlier: str | None) -> None:
    if not earlier:
        return
    if len(earlier) > EARLIER_POKES_KEPT:
        earlier = "[... earlier pokes left out ...]\n" + earlier[-EARLIER_POKES_KEPT:]
    _log(buffer, earlier)


def _log(buffer: Any, text: str) -> None:
    buffer.write(text if text.endswith("\n") else text + "\n")


def fresh_task(task: Any, dag: Any) -> Any:
    """A per-try copy of ``task``: rendering and ``execute`` change the operator, and the DAG is cached.

    Airflow gets a fresh operator per try from a fresh process; a warm worker reuses the imported DAG, so each try
    works on a shallow copy whose template fields are deep-copied (the DAG and its tasks are shared, not copied:
    XComArgs in those fields keep pointing at the real tasks). A field that cannot be copied is shared.
    """
    memo: dict[int, Any] = {id(dag): dag}
    for other in dag.task_dict.values():
        memo[id(other)] = other
    copied = copy.copy(task)
    for name in task.template_fields:
        if hasattr(task, name):
            try:
                value = copy.deepcopy(getattr(task, name), dict(memo))
            except Exception:
                value = getattr(task, name)
            object.__setattr__(copied, name, value)
    return copied


def _try_dag(store: Store, run: DagRun, task_id: str) -> TryDag:
    """The facts of the run's DAG version for this task: in a try's child, from the worker (which holds the
    version in its cache); in process, from the store's cache of versions."""
    found = (store.try_dag(run.dag_id, run.dag_hash, task_id) if isinstance(store, StoreProxy)
             else try_dag(store, run.dag_id, run.dag_hash, task_id))
    return _found(found, run)


def _version(store: Store, run: DagRun) -> SerializedDAG:
    # The store's LRU is the process's one cache of versions: a warm worker reads each one once.
    return _found(store.get_serialized_dag(run.dag_id, run.dag_hash), run)


def _found(found: _T | None, run: DagRun) -> _T:
    if found is None:
        raise RuntimeError(f"version {run.dag_hash!r} of DAG {run.dag_id!r} not found")
    return found


def _run(dispatch: Dispatch, *, store: Store, loader: LocalDagLoader, now_fn: Callable[[], dt.datetime],
         hostname: str | None, state: dict[str, Any], run: DagRun | None,
         point: tuple[str, dict[str, Any]] | None, nudge: Callable[[str, str], Any] | None = None,
         started: TaskInstance | None = None) -> TryResult:
    # lazy: cold start (runtime.mapping only for a mapped task)
    from updraft.runtime.mapping import expand_lengths, unmap

    key = dispatch.key
    run = run or store.get_run(key.dag_id, key.run_id)
    if run is None:
        raise RuntimeError(f"run {key.run_id!r} of DAG {key.dag_id!r} not found")
    facts = _try_dag(store, run, key.task_id)
    dag = loader.load_dag(key.dag_id, facts.relative_fileloc, facts.file_hash)
    task = find_task(dag, key.task_id)
    client = XComClient(store, key, now_fn)
    if (dispatch.try_number > 1 or (started and started.reschedule_count)) and point is None:
        # A new try, or a sensor's next poke, starts without the XComs pushed before, as in Airflow (a try resumed
        # after a deferral keeps them: it is the same try going on).
        store.clear_xcoms(key)
    ti = RuntimeTaskInstance(task=task, dag_id=key.dag_id, run_id=key.run_id, map_index=key.map_index,
                             try_number=dispatch.try_number, max_tries=task.retries,
                             xcom_client=client, serialized_dag=lambda: _version(store, run), hostname=hostname,
                             start_date=started.start_date if started and started.start_date else now_fn(),
                             reschedule_count=started.reschedule_count if started else 0,
                             first_reschedule_date=started.first_reschedule_date if started else None)
    # In a try's child the store is the worker's proxy: other DAGs are read and triggered in the worker, which
    # nudges the scheduler itself (the proxy answers CrossDag's calls).
    ti.cross_dag = (cast(CrossDag, store.cross_dag()) if isinstance(store, StoreProxy)
                    else CrossDag(store, now_fn=now_fn, nudge=nudge))
    context = build_context(ti=ti, task=task, dag=dag, run=run, store=store)
    install_asset_context(context, store, task, run)
    install_state_stores(context, store, key, task)
    skip: set[int] = set()
    if getattr(task, "is_mapped", False):
        context["expanded_ti_count"] = expand_lengths(task, context)
        task, skip = unmap(task, key.map_index, context)  # a new operator already
    else:
        task = fresh_task(task, dag)
    ti.task = task
    context["task"] = task
    state.update(task=task, context=context)
    # Whatever the try's outcome, its operator extra links are stored as it ends, before its callbacks run (as
    # Airflow's finalize does).
    try:
        render_task(task, dag, context, skip=skip)
        record_rendered_fields(store, dispatch, task)  # before execute, as Airflow: a failed try shows what it ran
        # As Airflow's _execute_task: the try's AIRFLOW_CTX_* variables are in the environment of the task's code.
        os.environ.update(context_env_vars(context))
        with set_current_context(context):
            # Airflow's _execute_task order: pre_execute (hook, then an operator's own method), on_execute_callback,
            # execute (the only part under execution_timeout), post_execute (hook, then method).
            if getattr(task, "_pre_execute_hook", None):
                task._pre_execute_hook(context)
            if callable(getattr(task, "pre_execute", None)):
                task.pre_execute(context)
            _callbacks(state, "on_execute_callback")
            if point is None and (starts_deferred := start_trigger(task)) is not None:
                raise starts_deferred
            with execution_timeout(task.execution_timeout, task.task_id):
                result = resume(task, point, context) if point is not None else task.execute(context)
            if getattr(task, "_post_execute_hook", None):
                task._post_execute_hook(context, result)
            if callable(getattr(task, "post_execute", None)):
                task.post_execute(context, result)
        template = context.get("map_index_template")
        if template:
            # Airflow renders the map index name after execute, so values the task added to the context count.
            ti.rendered_map_index = str(template_env(dag, native=is_native(task, dag)).from_string(template)
                                        .render(**context))
            logging.getLogger("airflow.task").info("Map index rendered as %s", ti.rendered_map_index)
        xcom_length = push_result(task, result, client, maps_downstream=facts.maps_downstream,
                                  is_mapped=key.map_index >= 0)
        keep_outlet_events(store, key, dispatch.try_number, task, context, now_fn())
        return TryResult(TaskInstanceState.SUCCESS, xcom_length=xcom_length, skip_task_ids=sorted(ti.skip_task_ids))
    finally:
        persist_links(task, ti, context)
        if getattr(task, "overwrite_rtif_after_execution", False):
            _record_after_execution(store, dispatch, task)
