"""The routing executor sends the Lambda tries of a task remembered as long to its recorded executor."""

from __future__ import annotations

import pytest

from updraft.executors.base import Dispatch
from updraft.executors.callback_requests import TaskCallbackRequest
from updraft.executors.recording import RecordingExecutor
from updraft.executors.routing import RoutingExecutor
from updraft.model.records import TIKey

RUN = "manual__2024-01-01T00:00:00+00:00"
LONG = Dispatch(TIKey("etl", RUN, "train"), 1, "a" * 32)
SHORT = Dispatch(TIKey("etl", RUN, "extract"), 1, "b" * 32)
CALLBACK = TaskCallbackRequest.for_try(TIKey("etl", RUN, "train"), 1, request_id="c" * 32, retried=False,
                                       message="zombie")


class Recorded:
    """The store's ``long_task_executors``: what it was asked, and ``train`` recorded as Fargate."""

    def __init__(self) -> None:
        self.asked: list[set] = []

    def __call__(self, tasks):
        self.asked.append(set(tasks))
        return {("etl", "train"): {"executor": "fargate", "cpu": 1024, "memory": 6144}}


def test_a_long_task_s_lambda_try_goes_to_fargate_and_others_stay():
    lam, far, recorded = RecordingExecutor(), RecordingExecutor(), Recorded()
    RoutingExecutor({"lambda": lam, "fargate": far}, long_tasks=recorded).dispatch([LONG, SHORT, CALLBACK])
    (moved,) = far.take()  # with the size its memory hand-off chose
    assert (moved.key, moved.executor, moved.try_id) == (LONG.key, "fargate", "a" * 32)
    assert moved.compute == {"executor": "fargate", "cpu": 1024, "memory": 6144}
    assert lam.take() == [SHORT, CALLBACK]  # callbacks are short: they stay on Lambda
    assert recorded.asked == [{("etl", "train"), ("etl", "extract")}]  # one read for the batch


def test_no_read_without_a_fargate_executor_or_a_lambda_dispatch():
    lam, recorded = RecordingExecutor(), Recorded()
    RoutingExecutor({"lambda": lam}, long_tasks=recorded).dispatch([LONG])
    assert lam.take() == [LONG] and recorded.asked == []
    far = RecordingExecutor()
    explicit = Dispatch(LONG.key, 1, "d" * 32, executor="fargate")
    RoutingExecutor({"lambda": lam, "fargate": far}, long_tasks=recorded).dispatch([explicit])
    assert far.take() == [explicit] and recorded.asked == []


def test_a_failed_read_dispatches_as_chosen(caplog):
    def failing(tasks):
        raise RuntimeError("throttled")

    lam, far = RecordingExecutor(), RecordingExecutor()
    RoutingExecutor({"lambda": lam, "fargate": far}, long_tasks=failing).dispatch([LONG])
    assert lam.take() == [LONG] and "could not read which tasks outgrew Lambda" in caplog.text


def test_a_handed_off_dispatch_round_trips_and_a_bad_flag_is_refused():
    moved = Dispatch(LONG.key, 1, "e" * 32, executor="fargate", handed_off=True)
    assert Dispatch.from_payload(moved.to_payload()) == moved
    assert "handed_off" not in LONG.to_payload()  # unchanged for every other dispatch
    with pytest.raises(ValueError, match="'handed_off' must be a boolean"):
        Dispatch.from_payload({**moved.to_payload(), "handed_off": "yes"})
