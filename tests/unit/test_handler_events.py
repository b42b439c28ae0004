"""The scheduler's and worker's event shapes: the samples in events/ decode, anything else is refused clearly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from updraft.executors.base import Dispatch
from updraft.handler_events import (
    MalformedEvent,
    TaskFinished,
    TaskStopped,
    Tick,
    run_changed_event,
    scheduler_event,
    task_finished_event,
    worker_dispatch,
)

EVENTS = Path(__file__).resolve().parents[2] / "events"


def _sample(path: str) -> dict:
    return json.loads((EVENTS / path).read_text())


def test_samples_decode():
    assert scheduler_event(_sample("scheduler/eventbridge_tick.json")) == Tick(time="2026-11-22T18:00:00Z")
    finished = scheduler_event(_sample("scheduler/task_finished.json"))
    assert finished == TaskFinished("handler_chain", "manual__2026-11-22T18:00:00+00:00", "first", -1, 1, "success")
    dispatch = worker_dispatch(_sample("worker/dispatch.json"))
    assert dispatch.key.task_id == "first" and dispatch.try_number == 1 and dispatch.executor == "lambda"


def test_a_claim_share_s_event_names_its_share():
    from updraft.scheduling.claim_shares import Share

    decoded = scheduler_event(_sample("scheduler/claim_share.json"))
    assert decoded == TaskFinished("handler_wide", "manual__2026-11-22T18:00:00+00:00", share=Share(1, 3))
    event = run_changed_event("d", "r", share=Share(2, 4).to_detail())
    assert scheduler_event(json.loads(json.dumps(event))) == TaskFinished("d", "r", share=Share(2, 4))


@pytest.mark.parametrize(("share", "message"), [
    ([1], "list \\[index, count\\] of two integers"),
    ("1/3", "of two integers"),
    ([True, 3], "of two integers"),
    ([3, 3], "0 <= index < count"),
    ([0, 1], "2 <= count"),
    ([0, 99], "count <= 8"),
])
def test_a_malformed_claim_share_is_refused(share, message):
    event = _sample("scheduler/claim_share.json")
    event["detail"]["share"] = share
    with pytest.raises(MalformedEvent, match=f"detail.share of a updraft.task_finished event: .*{message}"):
        scheduler_event(event)


def test_eventbridge_scheduler_ticks_too():
    assert scheduler_event({"detail-type": "Scheduled Event", "source": "aws.scheduler"}) == Tick()


def test_task_finished_event_round_trips():
    dispatch = worker_dispatch(_sample("worker/dispatch.json"))
    event = task_finished_event(dispatch, "failed")
    assert scheduler_event(json.loads(json.dumps(event))) == TaskFinished(
        dispatch.key.dag_id, dispatch.key.run_id, "first", -1, 1, "failed")
    assert event["source"] == "updraft.worker"


@pytest.mark.parametrize("payload", [{}, {"dag_id": "d"}, "d", None, {**_sample("worker/dispatch.json"),
                                                                      "map_index": "0"}])
def test_bad_worker_payloads(payload):
    with pytest.raises(MalformedEvent, match="not a worker dispatch"):
        worker_dispatch(payload)


def test_dispatch_sample_is_what_the_executor_sends():
    sample = _sample("worker/dispatch.json")
    assert Dispatch.from_payload(sample).to_payload() == sample


def _stopped(**container) -> dict:
    event = _sample("scheduler/ecs_task_stopped.json")
    event["detail"]["containers"][0].update(container)
    return event


def test_a_stopped_fargate_task_names_the_try_it_lost_and_why():
    stopped = scheduler_event(_sample("scheduler/ecs_task_stopped.json"))
    assert isinstance(stopped, TaskStopped) and stopped.lost is not None
    assert stopped.lost.dispatch == Dispatch.from_payload({**_sample("worker/dispatch.json"), "executor": "fargate",
                                                           "compute": {"executor": "fargate", "cpu": 1024,
                                                                       "memory": 2048}})
    assert "OutOfMemoryError: Container killed due to memory usage" in stopped.lost.reason
    assert "EssentialContainerExited" in stopped.lost.reason and "exit code 137" in stopped.lost.reason
    never_ran = scheduler_event(_stopped(exitCode=None, reason="CannotPullContainerError: pull access denied"))
    assert never_ran.lost is not None and "the container never ran" in never_ran.lost.reason


def test_a_task_that_exited_0_or_ran_no_try_lost_nothing():
    assert scheduler_event(_stopped(exitCode=0)).lost is None  # its worker ended or handed on the try
    event = _sample("scheduler/ecs_task_stopped.json")
    event["detail"]["overrides"] = {"containerOverrides": [{"name": "worker"}]}
    assert scheduler_event(event).lost is None


@pytest.mark.parametrize(("change", "message"), [
    ({"lastStatus": "RUNNING"}, "not a stopped task"),
    ({"overrides": {"containerOverrides": [{"name": "worker", "environment": [
        {"name": "UPDRAFT_DISPATCH", "value": '{"dag_id": "d"}'}]}]}}, "run_id"),
])
def test_an_ecs_event_the_scheduler_cannot_use_is_refused(change, message):
    event = _sample("scheduler/ecs_task_stopped.json")
    event["detail"].update(change)
    with pytest.raises(MalformedEvent, match=message):
        scheduler_event(event)
