"""Worker Lambda: runs one claimed try. The event is the Lambda executor's async invoke, ``Dispatch.to_payload()``,
or a callback request (a DAG's success/failure callbacks, or those of a try the scheduler failed:
``updraft.executors.callback_requests``), fenced by its request id the same way.

The try is fenced by its ``try_id`` (``updraft.runtime.worker.handle_dispatch``): a duplicate or superseded
dispatch runs nothing and reports ``not_runnable``, so Lambda's at-least-once async delivery is harmless. After the
try, the same call schedules the run's next tasks (the mini scheduler), dispatching them through the scheduler's
executors, so a downstream task starts without waiting for a tick.

Why a malformed payload *returns* ``{"status": "rejected"}`` instead of raising: Lambda retries a failed async
invocation twice and then hands it to the on-failure destination, and a payload that cannot be decoded will
never decode, so raising would only triple the error and the bill. It is logged at ERROR with the payload and
counted (``DispatchesRejected``), which is where an alarm belongs. Failures *after* decoding (the store throttled,
S3 unreachable) do raise: Lambda's retry can then succeed, and it is safe: a retry that finds its try already
running loses the fence and returns, and the scheduler's lease check takes over that try.

A try about to reach the function's time or memory limit (from the Lambda context) is stopped and handed to
Fargate without spending a retry (``updraft.runtime.handoff``): ``{"status": "handed_off"}``.

Also the Fargate task's entrypoint: ``python -m functions.worker.handler`` reads the dispatch from
``UPDRAFT_DISPATCH`` (what ``FargateExecutor`` sets) and exits non-zero only for a rejected payload or a stop. A
SIGTERM (ECS stopping the task) fails the running try as Airflow fails a killed one and keeps its log
(``updraft.runtime.stopping``).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import sys
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from updraft.config import UpdraftConfig
from updraft.executors.callback_requests import DagCallbackRequest, TaskCallbackRequest
from updraft.handler_events import MalformedEvent, worker_dispatch
from updraft.model.deferrals import ResumeRequest, ScheduleRunRequest
from updraft.model.wakeups import RunDueRequest
from updraft.process_guard import make_undumpable
from updraft.services import shared_services as services

if TYPE_CHECKING:
    from updraft.runtime.handoff import LambdaLimits

make_undumpable()  # before this process holds a client or runs user code: see updraft.process_guard

logger = Logger(service="updraft-worker")
metrics = Metrics(namespace=UpdraftConfig.from_env().metrics_namespace, service="updraft-worker")


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def run(event: Any, limits: LambdaLimits | None = None) -> dict[str, Any]:
    """Decode, run, report; shared by the Lambda handler (with its ``limits``) and the Fargate entrypoint."""
    try:
        dispatch = worker_dispatch(event)
    except MalformedEvent as exc:
        logger.error("rejected a malformed dispatch", extra={"error": str(exc), "payload": repr(event)[:2000]})
        metrics.add_metric(name="DispatchesRejected", unit=MetricUnit.Count, value=1)
        return {"status": "rejected", "error": str(exc)}
    from updraft.runtime import usage_meter

    usage_meter.install()  # before the first client exists (services are built below): each reports to the meter
    svc = services()
    if isinstance(dispatch, DagCallbackRequest | TaskCallbackRequest):
        return _run_callbacks(dispatch, svc)
    if isinstance(dispatch, ResumeRequest):  # a deferred try's wait ended (its Step Functions execution)
        from updraft.runtime.worker import handle_resume

        resumed = handle_resume(dispatch, store=svc.store, scheduler=svc.scheduler, now_fn=_now)
        metrics.add_metric(name="TriesResumed" if resumed else "ResumesNotRunnable", unit=MetricUnit.Count, value=1)
        return {"status": "resumed" if resumed else "not_runnable", "task": dispatch.key.label,
                "try_number": dispatch.try_number}
    if isinstance(dispatch, ScheduleRunRequest):  # a reschedule-mode sensor's next poke or a retry is due
        svc.scheduler.schedule_run(dispatch.dag_id, dispatch.run_id)
        metrics.add_metric(name="NextPokeWakes", unit=MetricUnit.Count, value=1)
        return {"status": "scheduled", "dag_id": dispatch.dag_id, "run_id": dispatch.run_id}
    if isinstance(dispatch, RunDueRequest):  # a scheduled run is due (``scheduling.wakeups``)
        from updraft.scheduling import run_due_now

        report = run_due_now(svc.scheduler, dispatch.dag_id)
        metrics.add_metric(name="RunDueWakes", unit=MetricUnit.Count, value=1)
        return {"status": "runs_created", "dag_id": dispatch.dag_id, "runs_created": report.runs_created}
    from updraft.runtime.handoff import HandedOff
    from updraft.runtime.worker import handle_dispatch

    key = dispatch.key
    logger.append_keys(dag_id=key.dag_id, run_id=key.run_id, task_id=key.task_id, map_index=key.map_index,
                       try_number=dispatch.try_number)
    failures_before = getattr(svc.scheduler.executor, "failures", 0)
    try:
        with usage_meter.metering(usage_meter.meter_for(dispatch, limits)):
            result = handle_dispatch(dispatch, store=svc.store, loader=svc.loader, scheduler=svc.scheduler,
                                     now_fn=_now, log_sink=svc.log_sink, hand_off=svc.nudge_scheduler,
                                     waits=svc.waits, limits=limits, credentials=svc.dag_code_credentials)
    finally:
        logger.remove_keys(["dag_id", "run_id", "task_id", "map_index", "try_number"])
        # Downstream tries the mini scheduler claimed but could not hand over (they wait for the queued timeout).
        metrics.add_metric(name="DispatchesFailed", unit=MetricUnit.Count,
                           value=getattr(svc.scheduler.executor, "failures", 0) - failures_before)
    if result is None:
        logger.info("dispatch not runnable (duplicate or superseded)")
        metrics.add_metric(name="TriesNotRunnable", unit=MetricUnit.Count, value=1)
        return {"status": "not_runnable", "task": key.label, "try_number": dispatch.try_number}
    if isinstance(result, HandedOff):
        logger.warning("try handed off to Fargate", extra={"reason": result.reason, "task": key.label})
        metrics.add_metric(name="TriesHandedOff", unit=MetricUnit.Count, value=1)
        return {"status": "handed_off", "task": key.label, "try_number": dispatch.try_number,
                "executor": result.dispatch.executor, "reason": result.reason}
    state = getattr(result.state, "value", result.state)
    logger.info("try finished", extra={"state": state, "task": key.label})
    metrics.add_metric(name="TriesRun", unit=MetricUnit.Count, value=1)
    return {"status": "ran", "task": key.label, "try_number": dispatch.try_number, "state": state}


def _run_callbacks(request: DagCallbackRequest | TaskCallbackRequest, svc: Any) -> dict[str, Any]:
    from updraft.runtime.worker import run_callback_request

    ran = run_callback_request(request, store=svc.store, loader=svc.loader, now_fn=_now, log_sink=svc.log_sink,
                               credentials=svc.dag_code_credentials)
    key = request.ti_key if isinstance(request, TaskCallbackRequest) else request.key
    logger.info("callbacks ran" if ran else "callbacks already ran (duplicate delivery)",
                extra={"dag_id": key.dag_id, "run_id": key.run_id, "request_id": request.request_id})
    metrics.add_metric(name="CallbacksRun" if ran else "CallbacksNotRunnable", unit=MetricUnit.Count, value=1)
    result: dict[str, Any] = {"status": "callbacks_ran" if ran else "not_runnable", "dag_id": key.dag_id,
                              "run_id": key.run_id}
    if isinstance(request, DagCallbackRequest):
        result["reason"] = request.reason
    else:
        result.update(task=key.label, try_number=request.try_number)
    return result


def warm_up() -> None:
    """What a warm container already has when a try arrives: the try path's imports (timetables included, which
    a DAG's first deserialization loads), the clients and the store a first try builds, the DAG files mirrored,
    the DAG-code role's credentials, and the task server tries fork from (waited for until it is non-dumpable, not
    through its imports). Each took a first try ~0.1-0.6 s.

    Local mode's worker processes, which stand for warm containers, call it when they start
    (``updraft.local.workers``). The Lambda handler does not call it at init: a cold try does the same work
    either way, and measured so it took longer (decision 0029). Never raises: a first try builds whatever is
    missing, and says why if it cannot.
    """
    try:
        from updraft.runtime import usage_meter
        from updraft.runtime import worker as _try_path  # noqa: F401 (imported for its cost, not its names)
        from updraft.runtime.supervisor import shared_supervisor
        from updraft.timetables import registry as _timetables  # noqa: F401 (the same)

        usage_meter.install()  # before the first client exists, as ``run`` does
        svc = services()
        svc.scheduler, svc.loader, svc.log_sink  # noqa: B018 (built for their side effects)
        svc.store.get_dag_meta("__warm_up__")  # opens the store's connection
        if svc.dag_code_credentials is not None:
            svc.dag_code_credentials.environment()  # one AssumeRole an hour, kept by the process
        shared_supervisor().start()
        svc.loader.mirror()  # last: a bucket that cannot be listed yet leaves the rest warm
    except Exception:
        logger.warning("worker warm-up failed", exc_info=True)


@metrics.log_metrics
@logger.inject_lambda_context
def handler(event: Any, context: Any) -> dict[str, Any]:
    from updraft.runtime.handoff import LambdaLimits

    return run(event, LambdaLimits.from_context(context))


def main() -> int:
    """Fargate entrypoint: the dispatch comes in ``UPDRAFT_DISPATCH``."""
    from updraft.runtime.stopping import WorkerStopped, fail_try_on_sigterm

    raw = os.environ.get("UPDRAFT_DISPATCH", "")
    try:
        event: Any = json.loads(raw)
    except ValueError:
        event = raw
    try:
        with fail_try_on_sigterm():
            result = run(event)
    except WorkerStopped as stopped:  # stopped outside the task's code (before it started, or after it ended)
        result = {"status": "stopped", "error": str(stopped)}
    metrics.flush_metrics()
    print(json.dumps(result))
    return {"rejected": 2, "stopped": 128 + signal.SIGTERM}.get(result["status"], 0)


if __name__ == "__main__":
    sys.exit(main())
