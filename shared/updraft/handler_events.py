"""The events the scheduler and worker Lambdas accept, decoded in one place so handlers stay thin.

Scheduler (``functions/scheduler``), three shapes:

- **tick**: the EventBridge Scheduled Event a ``rate(...)`` rule sends (``"detail-type": "Scheduled Event"``,
  ``"source": "aws.events"``; EventBridge Scheduler's ``aws.scheduler`` is accepted too) -> a full pass.
- **task finished**: an EventBridge-shaped envelope, the same whether it comes through an event bus or as a
  direct asynchronous invoke (so a rule can be added later without changing the handler)::

      {"detail-type": "updraft.task_finished", "source": "updraft.worker",
       "detail": {"dag_id": "...", "run_id": "...", "task_id": "...", "map_index": -1,
                  "try_number": 1, "state": "success"}}

  Only ``dag_id`` and ``run_id`` are required: the event only says *which run* to look at again (Airflow's mini
  scheduler); the store holds the truth, so a duplicate or late event changes nothing. ``"share": [index, count]``
  (sent by a scheduler that cut a wide claim into shares, ``updraft.scheduling.claim_shares``): claim only that
  share of the run's ready tries.
- **task stopped**: ECS's ``ECS Task State Change`` event (``"source": "aws.ecs"``) for a stopped Fargate worker
  task, which the stack's rule sends -> the try it lost, if any, fails at once (``executors.fargate.lost_try``).

Worker (``functions/worker``): exactly ``Dispatch.to_payload()`` (the Lambda executor's async invoke), or a
callback request's (``"kind": "dag_callback"`` or ``"task_callback"``: ``updraft.executors.callback_requests``).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from updraft.executors.base import Dispatch, LostTry
from updraft.executors.callback_requests import callback_request_from_payload
from updraft.executors.fargate import TASK_STATE_CHANGE, lost_try
from updraft.model.deferrals import ResumeRequest, ScheduleRunRequest
from updraft.model.wakeups import RunDueRequest

if TYPE_CHECKING:
    from updraft.scheduling import Share

TICK_DETAIL_TYPE = "Scheduled Event"
TICK_SOURCES = ("aws.events", "aws.scheduler")
TASK_FINISHED = "updraft.task_finished"
WORKER_SOURCE = "updraft.worker"
ECS_SOURCE = "aws.ecs"


class MalformedEvent(ValueError):
    """The event is not one the handler accepts; the message says what was expected."""


@dataclass(frozen=True)
class Tick:
    time: str | None = None  # when EventBridge fired it (informative: the scheduler uses its own clock)


@dataclass(frozen=True)
class TaskFinished:
    dag_id: str
    run_id: str
    task_id: str | None = None
    map_index: int = -1
    try_number: int | None = None
    state: str | None = None
    share: Share | None = None  # claim only this share of the run's ready tries


@dataclass(frozen=True)
class TaskStopped:
    task_arn: str
    lost: LostTry | None  # None: the task ended its try itself, or ran no try of Updraft's


def scheduler_event(event: object) -> Tick | TaskFinished | TaskStopped:
    if not isinstance(event, dict):
        raise MalformedEvent(f"the scheduler expects a JSON object event, got {type(event).__name__}")
    kind = event.get("detail-type")
    if kind == TICK_DETAIL_TYPE and event.get("source") in TICK_SOURCES:
        return Tick(time=event.get("time"))
    if kind == TASK_STATE_CHANGE and event.get("source") == ECS_SOURCE:
        detail = event.get("detail")
        if not isinstance(detail, dict):
            raise MalformedEvent(f"an {TASK_STATE_CHANGE!r} event needs a 'detail' object")
        try:
            return TaskStopped(task_arn=str(detail.get("taskArn", "")), lost=lost_try(detail))
        except ValueError as exc:
            raise MalformedEvent(f"an {TASK_STATE_CHANGE!r} event the scheduler cannot use: {exc}") from None
    if kind == TASK_FINISHED:
        detail = event.get("detail")
        if not isinstance(detail, dict):
            raise MalformedEvent(f"a {TASK_FINISHED} event needs a 'detail' object")
        for name in ("dag_id", "run_id"):
            if not isinstance(detail.get(name), str) or not detail[name]:
                raise MalformedEvent(f"a {TASK_FINISHED} event needs detail.{name} (a non-empty string)")
        map_index = detail.get("map_index", -1)
        if not isinstance(map_index, int) or isinstance(map_index, bool):
            raise MalformedEvent(f"detail.map_index of a {TASK_FINISHED} event must be an integer")
        return TaskFinished(dag_id=detail["dag_id"], run_id=detail["run_id"], task_id=detail.get("task_id"),
                            map_index=map_index, try_number=detail.get("try_number"), state=detail.get("state"),
                            share=_share(detail["share"]) if "share" in detail else None)
    raise MalformedEvent(f"the scheduler accepts an EventBridge 'Scheduled Event' (tick), a {TASK_FINISHED!r} "
                         f"event or ECS's {TASK_STATE_CHANGE!r}; got detail-type {kind!r} from source "
                         f"{event.get('source')!r}")


def _share(value: object) -> Share:
    # lazy: cold start (only a share's event needs it; the scheduler that claims it loads it anyway)
    from updraft.scheduling import Share

    try:
        return Share.from_detail(value)
    except ValueError as exc:
        raise MalformedEvent(f"detail.share of a {TASK_FINISHED} event: {exc}") from None


def tick_event(rule_arn: str, *, now: dt.datetime | None = None) -> dict[str, Any]:
    """The Scheduled Event a ``rate(...)`` rule sends (local mode's tick loop sends the same)."""
    import uuid

    return {"version": "0", "id": str(uuid.uuid4()), "detail-type": TICK_DETAIL_TYPE, "source": TICK_SOURCES[0],
            "account": rule_arn.split(":")[4], "time": (now or dt.datetime.now(dt.UTC)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "region": rule_arn.split(":")[3], "resources": [rule_arn], "detail": {}}


def task_finished_event(dispatch: Dispatch, state: str | None, *,
                        now: dt.datetime | None = None) -> dict[str, Any]:
    """The task-finished envelope for ``dispatch`` (what a direct invoke of the scheduler sends)."""
    key = dispatch.key
    return run_changed_event(key.dag_id, key.run_id, now=now, task_id=key.task_id, map_index=key.map_index,
                             try_number=dispatch.try_number, state=state)


def run_changed_event(dag_id: str, run_id: str, *, now: dt.datetime | None = None, source: str = WORKER_SOURCE,
                      **detail: Any) -> dict[str, Any]:
    """The envelope that makes the scheduler look at one run again (a task finished, a run was triggered)."""
    return {"version": "0", "detail-type": TASK_FINISHED, "source": source,
            "time": (now or dt.datetime.now(dt.UTC)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "detail": {"dag_id": dag_id, "run_id": run_id, **detail}}


def worker_dispatch(event: Any) -> Dispatch | ResumeRequest | ScheduleRunRequest | RunDueRequest:
    """The dispatch an async worker invoke carries (a try, a callback request, a deferred try's resume, a
    sensor's next-poke or a retry's wake, or a scheduled run's wake); MalformedEvent naming the problem otherwise."""
    try:
        return (callback_request_from_payload(event) or ResumeRequest.from_payload(event)
                or ScheduleRunRequest.from_payload(event) or RunDueRequest.from_payload(event)
                or Dispatch.from_payload(event))
    except ValueError as exc:
        raise MalformedEvent(f"not a worker dispatch: {exc}") from None
