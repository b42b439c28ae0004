"""The routing executor sends the Lambda tries of a task remembered as long to its recorded executor."""

from __future__ import annotations

import pytest

from updraft.executors.base import Dispatch
from updraft.executors.callback_requests import TaskCallbackRequest
from updraft.executors.recording import RecordingExecutor
from updraft.executors.routing import REMEMBERED_S, RoutingExecutor
from updraft.model.records import TIKey

RUN = "manual__2024-01-01T00:00:00+00:00"
LONG = Dispatch(TIKey("etl", RUN, "train"), 1, "a" * 32)
SHORT = Dispatch(TIKey("etl", RUN, "extract"), 1, "b" * 32)
CALLBACK = TaskCallbackRequest.for_try(TIKey("etl", RUN, "train"), 1, request_id="c" * 32, retried=False,
                                       message="zombie")


class Recorded:
    """The store's ``dags_long_tasks``: which DAGs it was asked for, and ``etl.train`` recorded as Fargate."""

    def __init__(self) -> None:
        self.asked: list[set] = []

    def __call__(self, dag_ids):
        self.asked.append(set(dag_ids))
        return {("etl", "train"): {"executor": "fargate", "cpu": 1024, "memory": 6144}} if "etl" in dag_ids else {}


def test_a_long_task_s_lambda_try_goes_to_fargate_and_others_stay():
    lam, far, recorded = RecordingExecutor(), RecordingExecutor(), Recorded()
    RoutingExecutor({"lambda": lam, "fargate": far}, long_tasks=recorded).dispatch([LONG, SHORT, CALLBACK])
    (moved,) = far.take()  # with the size its memory hand-off chose
    assert (moved.key, moved.executor, moved.try_id) == (LONG.key, "fargate", "a" * 32)
    assert moved.compute == {"executor": "fargate", "cpu": 1024, "memory": 6144}
    assert lam.take() == [SHORT, CALLBACK]  # callbacks are short: they stay on Lambda
    assert recorded.asked == [{"etl"}]  # one read for the batch: the DAG's records


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


def test_a_dags_records_are_read_once_and_remembered_for_a_while_then_read_again():
    lam, far, recorded, now = RecordingExecutor(), RecordingExecutor(), Recorded(), [100.0]
    router = RoutingExecutor({"lambda": lam, "fargate": far}, long_tasks=recorded, clock=lambda: now[0])
    other = Dispatch(TIKey("other", RUN, "load"), 1, "e" * 32)
    for item in (SHORT, LONG, other):  # a pass sends its claims one dispatch at a time
        router.dispatch([item])
    assert recorded.asked == [{"etl"}, {"other"}]  # each DAG read once, not each dispatch
    assert [d.key for d in far.take()] == [LONG.key] and lam.take() == [SHORT, other]

    now[0] += REMEMBERED_S - 0.1
    router.dispatch([LONG, other])
    assert len(recorded.asked) == 2 and [d.key for d in far.take()] == [LONG.key]
    now[0] += 0.1  # a record written meanwhile reaches the dispatches from here on
    router.dispatch([LONG, other])
    assert recorded.asked[2:] == [{"etl", "other"}] and [d.key for d in far.take()] == [LONG.key]


def test_a_failed_read_is_not_remembered():
    calls = []

    def flaky(dag_ids):
        calls.append(set(dag_ids))
        if len(calls) == 1:
            raise RuntimeError("throttled")
        return Recorded()(dag_ids)

    lam, far = RecordingExecutor(), RecordingExecutor()
    router = RoutingExecutor({"lambda": lam, "fargate": far}, long_tasks=flaky, clock=lambda: 0.0)
    router.dispatch([LONG])
    router.dispatch([LONG])
    assert calls == [{"etl"}, {"etl"}]
    assert lam.take() == [LONG] and [d.key for d in far.take()] == [LONG.key]


def test_a_handed_off_dispatch_round_trips_and_a_bad_flag_is_refused():
    moved = Dispatch(LONG.key, 1, "e" * 32, executor="fargate", handed_off=True)
    assert Dispatch.from_payload(moved.to_payload()) == moved
    assert "handed_off" not in LONG.to_payload()  # unchanged for every other dispatch
    with pytest.raises(ValueError, match="'handed_off' and 'waited' must be booleans"):
        Dispatch.from_payload({**moved.to_payload(), "handed_off": "yes"})
