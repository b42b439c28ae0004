"""The scheduler's and worker's event shapes: the samples in events/ decode, anything else is refused clearly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from updraft.executors.base import Dispatch
from updraft.handler_events import (
    MalformedEvent,
    TaskFinished,
    Tick,
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
