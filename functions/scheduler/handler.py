"""Scheduler Lambda: an EventBridge tick runs a full scheduling pass; a task-finished event schedules one run; ECS's
event of a stopped Fargate worker task fails the try it lost at once (``updraft.scheduling.decisions.lost_tries``).

The accepted event shapes are documented in ``updraft.handler_events``. Both are idempotent: every decision is a
conditional write in the store, so a redelivered tick or a duplicate task-finished event finds the runs already
created and the tries already claimed, and dispatches nothing again. A malformed event raises ``MalformedEvent``
(a ValueError naming what was expected): it is a deployment mistake, and a failed invocation is where it shows.
Every pass records the scheduler's heartbeat (at most every 30 s per container) for ``GET /monitor/health``;
a tick's pass also emits Airflow's scheduler and pool metrics (``updraft.scheduling.pass_metrics``).

Settings come from the environment through ``updraft.config.UpdraftConfig``. Clients, the store and the
scheduler (with its cache of DAG versions) are built on first use and kept by the warm container. No Tracer: it
imports the X-Ray SDK (~300 ms of cold start) for spans this handler does not need.
"""

from __future__ import annotations

import datetime as dt
import functools
import time
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from updraft.config import UpdraftConfig
from updraft.handler_events import TaskStopped, Tick, scheduler_event
from updraft.process_guard import make_undumpable
from updraft.services import shared_services as services

if TYPE_CHECKING:
    from updraft.scheduling import PassMetrics

make_undumpable()  # before this process holds a client or runs user code: see updraft.process_guard

logger = Logger(service="updraft-scheduler")
metrics = Metrics(namespace=UpdraftConfig.from_env().metrics_namespace, service="updraft-scheduler")


@functools.lru_cache(maxsize=1)
def _tick_metrics(owner: object) -> PassMetrics:
    """Airflow's metrics of the ticks (``scheduling.pass_metrics``), kept as long as the environment's services:
    a warm container keeps both; a process that starts another environment (local mode, its tests) counts that
    environment's pools afresh instead of waiting out the previous one's period."""
    from updraft.scheduling import PassMetrics  # lazy: cold start (only a tick emits them)

    return PassMetrics(lambda: dt.datetime.now(dt.UTC))


@metrics.log_metrics
@logger.inject_lambda_context
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    decoded = scheduler_event(event)
    scheduler = services().scheduler
    failures_before = getattr(scheduler.executor, "failures", 0)
    if isinstance(decoded, Tick):
        started = time.perf_counter()
        report = scheduler.run_pass()
        _tick_metrics(services()).tick_done(scheduler, report, dt.timedelta(seconds=time.perf_counter() - started))
        kind = "tick"
    elif isinstance(decoded, TaskStopped):
        from updraft.scheduling import PassReport

        lost = decoded.lost
        failed = scheduler.fail_lost_try(lost) if lost is not None else None
        if lost is not None and failed is not None:
            logger.warning("a Fargate task stopped without ending its try: the try failed",
                           extra={"task": lost.dispatch.key.label, "reason": lost.reason})
        metrics.add_metric(name="TriesKilledExternally", unit=MetricUnit.Count, value=int(failed is not None))
        report = failed or PassReport()
        kind = "task_stopped"
    else:
        report = scheduler.schedule_run(decoded.dag_id, decoded.run_id, share=decoded.share)
        kind = "task_finished"
    from updraft.store.heartbeats import HEARTBEAT_EVERY, SCHEDULER  # the store's modules: not at cold import

    scheduler.store.heartbeat_component(SCHEDULER, dt.datetime.now(dt.UTC), every=HEARTBEAT_EVERY)
    metrics.add_metric(name="RunsCreated", unit=MetricUnit.Count, value=len(report.runs_created))
    metrics.add_metric(name="TriesDispatched", unit=MetricUnit.Count, value=len(report.dispatched))
    metrics.add_metric(name="RunsFinished", unit=MetricUnit.Count, value=len(report.runs_finished))
    # Claimed but not handed to Lambda/ECS: they wait for the queued timeout, so an alarm belongs on this.
    metrics.add_metric(name="DispatchesFailed", unit=MetricUnit.Count,
                       value=getattr(scheduler.executor, "failures", 0) - failures_before)
    # Runs or DAGs set aside because they cannot be loaded or decided (poison pills); the stack alarms on it.
    metrics.add_metric(name="PoisonPills", unit=MetricUnit.Count, value=len(report.poisoned))
    for label, error in report.poisoned.items():
        logger.error("set aside by the scheduler", extra={"item": label, "error": error})
    result = {"kind": kind, "runs_created": report.runs_created, "runs_started": report.runs_started,
              "runs_finished": report.runs_finished,
              "dispatched": [d.to_payload() for d in report.dispatched],
              "not_claimed": {label: str(reason) for label, reason in report.not_claimed.items()},
              "poisoned": report.poisoned}
    logger.info("scheduling done", extra={"kind": kind, "runs_created": len(report.runs_created),
                                          "dispatched": len(report.dispatched),
                                          "runs_finished": report.runs_finished})
    return result
