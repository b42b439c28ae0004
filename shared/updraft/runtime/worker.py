"""What a worker does with one dispatch: fence, run, report, then schedule the run's next tasks at once.

The try's user code runs in a child process (``supervisor``): it gets the DAG-code role's credentials
(``credentials``; none without one) and reaches the store only through this process, fenced to the try.
``in_process=True`` runs it here instead, holding the worker's credentials: only for callers that have none to
protect and need the task in their own process (a debugger on ``dags test``).

The worker Lambda, the Fargate entrypoint and local mode all call ``handle_dispatch``. A duplicate or stale
dispatch (at-least-once delivery, a retry that superseded it) loses ``start_try`` and runs nothing. While the task
runs, a heartbeat extends the try's lease so the scheduler does not take a long task for a zombie; a lost
heartbeat (someone ended the try) is logged and the result is then refused by ``finish_try``'s fencing.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
import socket
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from updraft.executors.base import Dispatch
from updraft.executors.callback_requests import DagCallbackRequest, TaskCallbackRequest
from updraft.model.deferrals import ResumeRequest, ScheduleRunRequest
from updraft.model.records import DagRun, TaskInstance
from updraft.model.states import TaskInstanceState
from updraft.model.wakeups import RunDueRequest
from updraft.runtime import handoff
from updraft.runtime.assets import emits_assets, publish_and_nudge
from updraft.runtime.dag_callbacks import run_dag_callbacks
from updraft.runtime.dag_code_credentials import DagCodeCredentials
from updraft.runtime.execute import run_try
from updraft.runtime.handoff import HandedOff, KeepEarlierLog, LambdaLimitReached, LambdaLimits, lambda_limit_guard
from updraft.runtime.loader import LocalDagLoader
from updraft.runtime.logs import LogSink
from updraft.runtime.next_poke import wake_at_next_poke
from updraft.runtime.secrets import configured_backend
from updraft.runtime.state_stores import clear_on_success
from updraft.runtime.stopping import WorkerStopped
from updraft.runtime.task_callbacks import run_task_callbacks
from updraft.runtime.usage_meter import usage_so_far, with_usage
from updraft.scheduling import (
    DEFAULT_LEASE,
    NextHop,
    PassReport,
    TryResult,
    Waits,
    claim_callback,
    finish_try,
    hand_over_for,
    holds_a_named_pool,
    next_hop,
    resume_try,
    run_due_now,
    schedule_downstream,
    start_try,
    start_wait,
    wake_for_retry,
)
from updraft.serialization.model import SerializedDAG
from updraft.store.api import Store

if TYPE_CHECKING:
    from updraft.scheduling import Scheduler
    from updraft.scheduling.waiting_claims import HandOver

log = logging.getLogger(__name__)


def handle_dispatch(dispatch: Dispatch | ResumeRequest | ScheduleRunRequest | RunDueRequest, *, store: Store,
                    loader: LocalDagLoader, scheduler: Scheduler, now_fn: Callable[[], dt.datetime],
                    log_sink: LogSink | None = None, hostname: str | None = None,
                    lease: dt.timedelta = DEFAULT_LEASE,
                    hand_off: Callable[[str, str], bool] | None = None,
                    waits: Waits | None = None, limits: LambdaLimits | None = None,
                    credentials: DagCodeCredentials | None = None,
                    in_process: bool = False) -> TryResult | HandedOff | None:
    """Run ``dispatch`` once; None when it was not this worker's to run (duplicate or superseded).

    With ``limits`` (the worker Lambda's), a try about to reach one is handed to Fargate instead
    (``runtime.handoff``: ``HandedOff`` comes back and nothing is scheduled); without Fargate it fails saying so.

    Afterwards the run is scheduled again at once, where ``next_hop`` says: here (the mini scheduler), or by
    ``hand_off(dag_id, run_id)``, which asks the scheduler function to look at the run (it returns False when
    there is none, and the mini scheduler runs here after all). A try that defers starts its wait on ``waits``
    (``scheduling.deferrals``); a ``ResumeRequest`` (the wait ended) schedules the deferred try to resume.
    """
    if isinstance(dispatch, DagCallbackRequest | TaskCallbackRequest):  # callbacks, not a try: nothing to schedule
        run_callback_request(dispatch, store=store, loader=loader, now_fn=now_fn, log_sink=log_sink,
                             credentials=credentials, in_process=in_process)
        return None
    if isinstance(dispatch, ResumeRequest):
        handle_resume(dispatch, store=store, scheduler=scheduler, now_fn=now_fn)
        return None
    if isinstance(dispatch, ScheduleRunRequest):  # a sensor's next poke or a retry is due (``next_poke``, ``wakeups``)
        scheduler.schedule_run(dispatch.dag_id, dispatch.run_id)
        return None
    if isinstance(dispatch, RunDueRequest):  # a scheduled run is due (``wakeups``)
        run_due_now(scheduler, dispatch.dag_id)
        return None
    hostname = hostname or socket.gethostname()
    key = dispatch.key
    learn_run(dispatch, store)
    started = start_try(store, key, dispatch.try_id, now=now_fn(), hostname=hostname, lease=lease)
    if not started:
        log.info("dispatch %s try %s is not runnable (duplicate or superseded)", key.label, dispatch.try_number)
        _republish_assets(store, scheduler, dispatch, now_fn)
        return None
    run = run_for(dispatch, store)  # once (or carried): the try runs it, its version decides the outcome
    scheduler.metrics.try_started(started)
    scheduler.traces.try_started(started, run)
    dag = scheduler.dag(run.dag_id, run.dag_hash) if run is not None else None
    if dispatch.handed_off and log_sink is not None:
        log_sink = KeepEarlierLog(log_sink, key, dispatch.try_number)
    try:
        # A limit reached interrupts the wait for the child here (its process group is killed on the way out).
        with _Heartbeat(store, dispatch, now_fn, lease) as beat, lambda_limit_guard(limits):
            if in_process:
                result = run_try(dispatch, store=store, loader=loader, now_fn=now_fn, log_sink=log_sink,
                                 hostname=hostname, run=run, nudge=hand_off, started=started)
            else:
                result = _run_in_child(dispatch, store=store, loader=loader, now_fn=now_fn, log_sink=log_sink,
                                       hostname=hostname, run=run, dag=dag, credentials=credentials,
                                       lost=beat.lost, nudge=hand_off, started=started)
    except WorkerStopped as stopped:  # ECS stopped this worker: the child was ended, the try fails as killed
        result = TryResult(TaskInstanceState.FAILED, note=str(stopped))
        if log_sink is not None:  # after what the child wrote, as far as it got
            log_sink.write(key, dispatch.try_number,
                           (log_sink.read(key, dispatch.try_number) or "") + f"WorkerStopped: {stopped}\n")
    except LambdaLimitReached as reached:
        moved = handoff.hand_off(store, dispatch, executor=scheduler.executor, reached=reached, now=now_fn(),
                                 log_sink=log_sink, usage=usage_so_far(started))
        if moved is not None:
            return HandedOff(moved, str(reached))
        result = TryResult(TaskInstanceState.FAILED, note=f"{reached}; no Fargate executor to hand it to")
    if run is None or dag is None:  # the try failed on it already; without its run there is nothing to record
        raise RuntimeError(f"run {key.run_id!r} of DAG {key.dag_id!r} not found")
    result = with_usage(result)  # what the try used, when its caller meters it (the worker handler)
    reported = report_try(dispatch, result, store=store, scheduler=scheduler, dag=dag, started=started,
                          now_fn=now_fn, hand_off=hand_off, waits=waits)
    scheduler.traces.try_reported(dispatch.try_id, now_fn())  # its mini scheduler is done
    return reported


def learn_run(dispatch: Dispatch, store: Store) -> None:
    """Keep what a carried run says of where its instances are (``ti_shards``), before the fenced start, so the
    worker's store finds the instance without reading the run (``run_for`` says why the claimer's copy is as
    good as a read: a run's shard count never changes)."""
    if dispatch.run is not None:
        store.remember_run_shards(dispatch.key.dag_id, dispatch.key.run_id, dispatch.run.ti_shards)


def run_for(dispatch: Dispatch, store: Store) -> DagRun | None:
    """The try's run: as the claimer read it when the dispatch carries it (``executors.dispatch_run``), else read.

    Invariant: the claimer's copy is as good as a read after the fenced start. A run's identity (DAG version,
    logical date, data interval, conf, type) never changes, and every user act that changes its state reaches its
    instances, which the fenced start then refuses. Only what the context shows may lag: a note edited meanwhile,
    or the run's state when a mark raced the claim."""
    if dispatch.run is not None:
        return dispatch.run
    return store.get_run(dispatch.key.dag_id, dispatch.key.run_id)


def report_try(dispatch: Dispatch, result: TryResult, *, store: Store, scheduler: Scheduler, dag: SerializedDAG,
               started: TaskInstance, now_fn: Callable[[], dt.datetime],
               hand_off: Callable[[str, str], bool] | None = None, waits: Waits | None = None) -> TryResult:
    """After the try ran: record ``result`` (fenced by the try as ``started``), free its slots and schedule its run
    where ``next_hop`` says. The capacity benchmark plays a worker with this very function, so its request counts
    are the worker Lambda's."""
    key = dispatch.key
    # A try claimed from waiting instances hands its slots to the next one with its end where that is the only
    # claim its end makes (``waiting_claims.HandOver``); not a named pool's, which goes back first
    # (``holds_a_named_pool``).
    hand_over = (hand_over_for(store, scheduler, dag, started)
                 if dispatch.waited and not holds_a_named_pool(started) else None)
    finished = finish_try(store, key, dispatch.try_id, result, now=now_fn(), dag=dag, started=started,
                          hand_over=hand_over)
    if not finished:
        log.warning("result of %s try %s was refused: the try was ended elsewhere", key.label, dispatch.try_number)
    elif result.state == TaskInstanceState.SUCCESS and emits_assets(dag.task_dict[key.task_id]):
        publish_and_nudge(store, scheduler, key, dispatch.try_number, now_fn())
    if finished:
        ended = now_fn()
        scheduler.metrics.try_finished(finished, ended, dag.task_dict[key.task_id].task_type)
        scheduler.traces.try_finished(finished, ended)
    if finished and result.state == TaskInstanceState.SUCCESS:
        clear_on_success(store, key)
    if result.state == TaskInstanceState.UP_FOR_RESCHEDULE and finished:  # the next poke at its second
        wake_at_next_poke(waits, key, dispatch.try_number, finished.reschedule_count + 1, result.reschedule_date)
    if finished:  # a retry at its second too, not at the tick after its retry_delay
        wake_for_retry(waits, finished, now=now_fn())
    if result.state == TaskInstanceState.DEFERRED:  # its slots are back already (all but a kept pool slot)
        if finished:
            _start_wait(waits, finished)
        scheduler.schedule_run(key.dag_id, key.run_id)  # what waited for the freed slots goes now
        return result
    if next_hop(dag, key.task_id, finished) is NextHop.HAND_OFF:

        def hand_off_or_here() -> PassReport | None:
            if hand_off is not None and hand_off(key.dag_id, key.run_id):
                return None
            return scheduler.schedule_run(key.dag_id, key.run_id)

        _schedule_after(store, scheduler, dag, finished, result, hand_off_or_here, hand_over=hand_over)
        return result
    # The next task (the try gave its slots back with its end, before this look: ``finish_try``), and the whole
    # run once more when the look was coalesced with another.
    report = _schedule_after(store, scheduler, dag, finished, result,
                             functools.partial(scheduler.schedule_run, key.dag_id, key.run_id),
                             hand_over=hand_over)
    if report is not None and report.coalesced:
        scheduler.schedule_run(key.dag_id, key.run_id)
    return result


def _schedule_after(store: Store, scheduler: Scheduler, dag: SerializedDAG, finished: TaskInstance | None,
                    result: TryResult, whole_run: Callable[[], PassReport | None], *,
                    hand_over: HandOver | None = None) -> PassReport | None:
    """The mini scheduler after the try: only its downstream where it can (``scheduling.downstream``: no read
    of the whole run), else ``whole_run``; a try ended elsewhere leaves its run to ``whole_run``. ``hand_over``:
    what the try's end found handing over (``schedule_downstream``'s)."""
    if not finished:
        return whole_run()
    return schedule_downstream(store, scheduler, dag, finished, branched=bool(result.skip_task_ids),
                               whole_run=whole_run, hand_over=hand_over)


def _republish_assets(store: Store, scheduler: Scheduler, dispatch: Dispatch,
                      now_fn: Callable[[], dt.datetime]) -> None:
    """A redelivered dispatch of a try that succeeded: emit its outlet events again (idempotent), in case the
    worker that ran it stopped between recording the success and emitting them."""
    ti = store.get_ti(dispatch.key)
    if ti is None or ti.try_id != dispatch.try_id or ti.state != TaskInstanceState.SUCCESS:
        return
    run = store.get_run(dispatch.key.dag_id, dispatch.key.run_id)
    if run is not None and emits_assets(scheduler.dag(run.dag_id, run.dag_hash).task_dict.get(dispatch.key.task_id)):
        publish_and_nudge(store, scheduler, dispatch.key, dispatch.try_number, now_fn())


def handle_resume(request: ResumeRequest, *, store: Store, scheduler: Scheduler,
                  now_fn: Callable[[], dt.datetime]) -> bool:
    """A deferred try's wait ended: schedule it to resume (or end it), then schedule its run, which claims it as
    any scheduled instance. False: a late or duplicate resume (the try was cleared, marked or already resumed)."""
    state = resume_try(store, request.key, request.try_id, now=now_fn())
    if state is None:
        log.info("resume of %s try %s changes nothing (no longer that deferred try)", request.key.label,
                 request.try_number)
        return False
    scheduler.schedule_run(request.key.dag_id, request.key.run_id)
    return True


def _start_wait(waits: Waits | None, deferred: TaskInstance) -> None:
    if waits is None:  # the scheduler's backstop resumes it once its wait is overdue
        log.warning("%s deferred but no wait engine is configured; the scheduler will resume it late",
                    deferred.key.label)
        return
    start_wait(waits, deferred)


def _run_in_child(dispatch: Dispatch, *, store: Store, loader: LocalDagLoader, now_fn: Callable[[], dt.datetime],
                  log_sink: LogSink | None, hostname: str, run: DagRun | None, dag: SerializedDAG | None,
                  credentials: DagCodeCredentials | None, lost: threading.Event,
                  nudge: Callable[[str, str], bool] | None, started: TaskInstance) -> TryResult:
    """The try in a child of the process's task server (``supervisor``), with the DAG file current on disk."""
    # lazy: cold start (the supervisor only when a try runs in a child process)
    from updraft.runtime.supervisor import shared_supervisor

    timeout = None
    backend, backend_error = _secrets_backend()
    if dag is not None:
        loader.prepare(dag.relative_fileloc, dag.file_hash)
        task = dag.task_dict.get(dispatch.key.task_id)
        timeout = task.execution_timeout if task is not None else None
    return shared_supervisor().run(
        dispatch, store=store, dags_folder=loader.dags_folder, plugins_folder=loader.plugins_folder, now_fn=now_fn,
        log_sink=log_sink, hostname=hostname, run=run, credentials=credentials.environment() if credentials else None,
        backend=backend, backend_error=backend_error, execution_timeout=timeout, lost=lost, nudge=nudge,
        started=started)


def run_callback_request(request: DagCallbackRequest | TaskCallbackRequest, *, store: Store, loader: LocalDagLoader,
                         now_fn: Callable[[], dt.datetime], log_sink: LogSink | None = None,
                         credentials: DagCodeCredentials | None = None, in_process: bool = False) -> bool:
    """Run a callback request's callbacks once; False for a duplicate delivery.

    The callbacks are user code: they run in a child of the task server as a try does (the DAG-code role's
    ``credentials``, the store through the read-only proxy), after this process claimed the request."""
    if in_process:
        if isinstance(request, DagCallbackRequest):
            return run_dag_callbacks(request, store=store, loader=loader, now_fn=now_fn, log_sink=log_sink)
        return run_task_callbacks(request, store=store, loader=loader, now_fn=now_fn, log_sink=log_sink)
    # lazy: cold start (the supervisor only when callbacks run in a child process)
    from updraft.runtime.supervisor import shared_supervisor

    if not claim_callback(store, request):
        log.info("callback request %s of %s already ran", request.request_id, request.key.label)
        return False
    run = store.get_run(request.key.dag_id, request.key.run_id)
    serialized = store.get_serialized_dag(run.dag_id, run.dag_hash) if run is not None else None
    if serialized is not None:  # the child loads the DAG from the file current on disk
        loader.prepare(serialized.relative_fileloc, serialized.file_hash)
    backend, backend_error = _secrets_backend()
    shared_supervisor().run_callbacks(
        request, store=store, dags_folder=loader.dags_folder, plugins_folder=loader.plugins_folder, now_fn=now_fn,
        log_sink=log_sink, credentials=credentials.environment() if credentials else None, backend=backend,
        backend_error=backend_error)
    return True


def _secrets_backend() -> tuple[object, str | None]:
    """The configured secrets backend the worker reads for its child, or why it could not be built."""
    try:
        return configured_backend(), None
    except Exception as exc:  # a misconfigured backend: the child's reads fail naming it, as they did in-process
        return None, f"{type(exc).__name__}: {exc}"


class _Heartbeat:
    """Extends the lease every third of it until the try ends."""

    def __init__(self, store: Store, dispatch: Dispatch, now_fn: Callable[[], dt.datetime],
                 lease: dt.timedelta) -> None:
        self.store = store
        self.dispatch = dispatch
        self.now_fn = now_fn
        self.lease = lease
        self.stop = threading.Event()
        self.lost = threading.Event()  # the try was ended elsewhere: its process is killed
        self.thread = threading.Thread(target=self._beat, name=f"heartbeat-{dispatch.key.label}", daemon=True)

    def _beat(self) -> None:
        interval = max(self.lease.total_seconds() / 3, 1.0)
        while not self.stop.wait(interval):
            try:
                alive = self.store.heartbeat(self.dispatch.key, try_id=self.dispatch.try_id,
                                             lease_expires_at=self.now_fn() + self.lease)
            except Exception:  # a store hiccup: try again next beat, the lease still has two thirds left
                log.exception("heartbeat of %s failed", self.dispatch.key.label)
                continue
            if not alive:
                self.lost.set()
                log.warning("try %s of %s was ended elsewhere; its result will be refused",
                            self.dispatch.try_number, self.dispatch.key.label)
                return

    def __enter__(self) -> _Heartbeat:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()
