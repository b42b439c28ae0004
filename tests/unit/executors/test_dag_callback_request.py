"""The DAG callback request: its payload, how the worker's event decoding routes it, and the scheduler's choice of
reason, task instance and id."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from updraft.executors.dag_callback import CALLBACK_LOG_TASK_ID, DagCallbackRequest
from updraft.executors.fargate import FargateExecutor
from updraft.handler_events import MalformedEvent, worker_dispatch
from updraft.model.records import DagRun, TaskInstance, TIKey
from updraft.model.states import DagRunState, TaskInstanceState
from updraft.scheduling.dag_callbacks import callback_request

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
