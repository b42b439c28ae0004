"""The DAG callback request: its payload, how the worker's event decoding routes it, and the scheduler's choice of
reason, task instance and id."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from updraft.executors.callback_requests import CALLBACK_LOG_TASK_ID, DagCallbackRequest, TaskCallbackRequest
from updraft.executors.fargate import FargateExecutor
from updraft.handler_events import MalformedEvent, worker_dispatch
from updraft.model.records import DagRun, TaskInstance, TIKey
from updraft.model.states import DagRunState, TaskInstanceState
from updraft.scheduling.dag_callbacks import callback_request, task_callback_request
from updraft.scheduling.decisions.changes import TIChange

SAMPLE = json.loads((Path(__file__).resolve().parents[3] / "events" / "worker" / "dag_callback.json").read_text())
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def test_the_sample_decodes_and_round_trips():
    request = worker_dispatch(SAMPLE)
    assert isinstance(request, DagCallbackRequest)
    assert request.key == TIKey("handler_chain", SAMPLE["run_id"], CALLBACK_LOG_TASK_ID)
    assert request.ti_key == TIKey("handler_chain", SAMPLE["run_id"], "second")
    assert request.reason == "task_failure" and not request.success and request.executor == "lambda"
    assert request.to_payload() == SAMPLE
    # Fargate would start it once per request id, like a try per try_id.
    executor = FargateExecutor(None, "c", "td", ["s"], ["sg"], "worker")  # type: ignore[arg-type]
    assert executor.run_task_request(request)["clientToken"] == SAMPLE["request_id"][:64]


@pytest.mark.parametrize(("change", "field"), [
    ({"run_id": ""}, "run_id"), ({"request_id": None}, "request_id"), ({"success": "no"}, "success"),
    ({"ti_task_id": 3}, "ti_task_id"), ({"ti_map_index": "0"}, "ti_map_index"), ({"reason": ""}, "reason"),
])
def test_malformed_requests_are_refused_naming_the_field(change, field):
    with pytest.raises(MalformedEvent, match=field):
        worker_dispatch({**SAMPLE, **change})


DAG = SimpleNamespace(callbacks=["on_failure_callback"], task_dict={
    "a": SimpleNamespace(upstream_task_ids=[]), "b": SimpleNamespace(upstream_task_ids=["a"])})
RUN = DagRun("d", "r", "manual", "h", state=DagRunState.RUNNING)


def ti(task_id, state, end=0, *, start=None, note=None):
    end_date = T0 + dt.timedelta(seconds=end)
    return TaskInstance("d", "r", task_id, state=state, end_date=end_date, note=note,
                        start_date=end_date if start is None else T0 + dt.timedelta(seconds=start))


def test_the_scheduler_picks_airflows_reason_and_task_instance():
    failed = [ti("a", TaskInstanceState.FAILED, 5), ti("b", TaskInstanceState.FAILED, 9)]
    request = callback_request(DAG, RUN, DagRunState.FAILED, "task_failure: a, b failed", failed, end_date=T0)
    assert request.reason == "task_failure" and request.ti_key.task_id == "b" and not request.success
    again = callback_request(DAG, RUN, DagRunState.FAILED, "task_failure: a, b failed", failed, end_date=T0)
    assert again.request_id == request.request_id  # deterministic per run end
    later = callback_request(DAG, RUN, DagRunState.FAILED, "task_failure", failed, end_date=T0 + dt.timedelta(1))
    assert later.request_id != request.request_id  # a cleared run that fails again is called back again

    deadlocked = [ti("a", TaskInstanceState.SUCCESS), TaskInstance("d", "r", "b", state=TaskInstanceState.SCHEDULED)]
    request = callback_request(DAG, RUN, DagRunState.FAILED, "all_tasks_deadlocked: ...", deadlocked, end_date=T0)
    assert request.reason == "all_tasks_deadlocked" and request.ti_key.task_id == "b"

    cut = [ti("a", TaskInstanceState.SKIPPED, 10, start=3, note="dagrun_timeout: ..."),
           ti("b", TaskInstanceState.SKIPPED, 10, note="dagrun_timeout: ...")]
    request = callback_request(DAG, RUN, DagRunState.FAILED, "timed_out: ...", cut, end_date=T0)
    assert request.reason == "timed_out" and request.ti_key.task_id == "a"  # b never started

    # No success callback on this DAG: nothing to send.
    assert callback_request(DAG, RUN, DagRunState.SUCCESS, None, [], end_date=T0) is None


def test_a_task_callback_request_round_trips_and_logs_apart_from_the_task():
    request = TaskCallbackRequest.for_try(TIKey("d", "r", "t", 3), 2, request_id="x", retried=True, message="why")
    assert worker_dispatch(request.to_payload()) == request
    assert request.key == TIKey("d", "r", "@callbacks.t", 3) and request.ti_key == TIKey("d", "r", "t", 3)
    with pytest.raises(MalformedEvent, match="retried"):
        worker_dispatch({**request.to_payload(), "retried": None})


def test_the_scheduler_asks_for_task_callbacks_only_for_tries_it_failed_that_have_some():
    task = SimpleNamespace(callbacks=["on_failure_callback"], email=None, email_on_failure=True,
                           email_on_retry=True)
    running = TaskInstance("d", "r", "t", state=TaskInstanceState.RUNNING, try_number=2)

    def change(state, note):
        return TIChange(running.key, TaskInstanceState.RUNNING, state, {"note": note})

    request = task_callback_request(task, running, change(TaskInstanceState.FAILED, "zombie: worker lease expired"))
    assert request.try_number == 2 and not request.retried and request.message.startswith("zombie")
    # A retry calls on_retry_callback, which this task lacks; with email set, the retry alert is wanted.
    assert task_callback_request(task, running, change(TaskInstanceState.UP_FOR_RETRY, "zombie: worker lease expired at t")) is None
    emailing = SimpleNamespace(**{**task.__dict__, "email": "a@x.com"})
    assert task_callback_request(emailing, running, change(TaskInstanceState.UP_FOR_RETRY, "zombie: worker lease expired at t")).retried
    # Not a try the worker lost (fail_fast, a user's mark): the worker ran, or nothing should run.
    assert task_callback_request(task, running, change(TaskInstanceState.FAILED, "fail_fast")) is None
    queued = TaskInstance("d", "r", "t", state=TaskInstanceState.QUEUED)
    assert task_callback_request(task, queued, change(TaskInstanceState.FAILED, "zombie: worker lease expired at t")) is None
