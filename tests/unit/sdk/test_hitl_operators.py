"""The Human-in-the-loop operators' checks (Airflow 3.3's), the request and timeout rules of ``model.hitl``, and
where their waits run: no execution without a response timeout, none in `dags test` (Airflow's applies none)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from airflow.providers.standard.exceptions import HITLRejectException, HITLTimeoutError
from airflow.providers.standard.operators.hitl import (
    ApprovalOperator,
    HITLBranchOperator,
    HITLEntryOperator,
    HITLOperator,
)
from airflow.sdk import DAG, Param
from updraft.local.dag_test import HumanInputWaits
from updraft.model import hitl
from updraft.model.deferrals import execution_input
from updraft.model.records import TaskInstance
from updraft.model.states import TaskInstanceState
from updraft.runtime.deferral import NO_TIMEOUT, deferral_of
from updraft.scheduling.deferrals import start_wait
from updraft.sdk.exceptions import TaskDeferred

T0 = dt.datetime(2024, 3, 1, tzinfo=dt.UTC)


def test_the_operators_check_their_arguments_as_airflow():
    with pytest.raises(ValueError, match='"options" cannot be empty'):
        HITLOperator(task_id="a", subject="s", options=[])
    with pytest.raises(ValueError, match="should be a subset of options"):
        HITLOperator(task_id="a", subject="s", options=["x"], defaults="y")
    with pytest.raises(ValueError, match='More than one defaults given when "multiple" is set to False'):
        HITLOperator(task_id="a", subject="s", options=["x", "y"], defaults=["x", "y"])
    with pytest.raises(ValueError, match='"_options" is not allowed in params'):
        HITLOperator(task_id="a", subject="s", options=["x"], params={"_options": 1})
    with pytest.raises(ValueError, match="Passing options to ApprovalOperator is not allowed"):
        ApprovalOperator(task_id="a", subject="s", options=["x"])
    with pytest.raises(ValueError, match="contains keys that are not in `options`"):
        HITLBranchOperator(task_id="a", subject="s", options=["x"], options_mapping={"z": "t"})
    entry = HITLEntryOperator(task_id="a", subject="s")
    assert (entry.options, entry.defaults) == (["OK"], ["OK"])
    approval = ApprovalOperator(task_id="b", subject="s", defaults="Reject")
    assert (approval.options, approval.defaults, approval.multiple) == (["Approve", "Reject"], ["Reject"], False)


def test_only_the_tasks_own_params_are_form_fields():
    with DAG("d", schedule=None, start_date=T0, params={"dag_level": 1}):
        op = HITLOperator(task_id="a", subject="s", options=["x"], params={"n": Param(2, type="integer")})
    assert op.serialized_params == {"n": {"value": 2, "description": None, "schema": {"type": "integer"}}}


def test_an_error_event_fails_with_airflows_exception_and_a_response_is_checked():
    op = HITLOperator(task_id="a", subject="s", options=["x", "y"], params={"n": Param(1, type="integer")})
    with pytest.raises(HITLTimeoutError):
        op.execute_complete({}, event={"error": "late", "error_type": "timeout"})
    with pytest.raises(ValueError, match="not in"):
        op.execute_complete({}, event={"chosen_options": ["z"], "params_input": {}, "responded_at": T0.isoformat(),
                                       "responded_by_user": None})
    done = op.execute_complete({}, event={"chosen_options": ["y"], "params_input": {"n": 4},
                                          "responded_at": T0.isoformat(), "responded_by_user": {"id": "u"}})
    assert done == {"chosen_options": ["y"], "params_input": {"n": 4}, "responded_at": T0,
                    "responded_by_user": {"id": "u"}}


def test_reject_fails_the_approval_only_with_fail_on_reject():
    answer = {"chosen_options": ["Reject"], "params_input": {}, "responded_at": T0.isoformat(),
              "responded_by_user": None}
    with pytest.raises(HITLRejectException):
        ApprovalOperator(task_id="a", subject="s", fail_on_reject=True).execute_complete({}, event=answer)
    kept = ApprovalOperator(task_id="b", subject="s").execute_complete({}, event=answer)  # no downstream task
    assert kept["chosen_options"] == ["Reject"]


def test_a_timeout_resumes_with_the_response_the_defaults_or_airflows_error():
    request = hitl.request_record({"options": ["x", "y"], "defaults": ["y"], "params": {"n": {"value": 3}}},
                                  try_number=1, now=T0)
    event, record = hitl.timeout_resume(request, T0)
    assert record is not None and record["chosen_options"] == ["y"] and record["params_input"] == {"n": 3}
    assert event["timedout"] is True and event["responded_by_user"] is None
    answered = hitl.with_response(request, chosen_options=["x"], params_input={}, user={"id": "u", "name": "u"},
                                  now=T0)
    event, record = hitl.timeout_resume(answered, T0)
    assert (event["chosen_options"], event["timedout"], record) == (["x"], False, None)
    event, record = hitl.timeout_resume({**request, "defaults": None}, T0)
    assert (event["error_type"], record) == ("timeout", None)
    assert hitl.of_try(request, 2) is None and hitl.of_try(request, 1) == request


class _Waits:
    def __init__(self) -> None:
        self.started: list[str] = []

    def start(self, name: str, execution_input: dict[str, Any]) -> None:
        self.started.append(name)

    def stop(self, name: str) -> None:
        pass


def _deferred(timeout: dt.timedelta | None) -> TaskInstance:
    op = HITLOperator(task_id="ask", subject="s", options=["x"], response_timeout=timeout)
    with pytest.raises(TaskDeferred) as deferred:
        op.execute({})
    record = deferral_of(deferred.value, task_id="ask", now=T0).to_record()
    return TaskInstance("d", "r", "ask", state=TaskInstanceState.DEFERRED, try_number=1, try_id="tok",
                        trigger=record, next_method="execute_complete", next_kwargs={})


def test_a_wait_runs_only_for_a_response_timeout_and_never_in_dags_test():
    waits = _Waits()
    never = _deferred(None)
    assert never.trigger is not None and never.trigger["resume_at"] == NO_TIMEOUT.isoformat()
    start_wait(waits, never)
    assert waits.started == []  # only a response resumes it
    timed = _deferred(dt.timedelta(minutes=5))
    start_wait(waits, timed)
    assert len(waits.started) == 1

    class _Store:
        def get_ti(self, key: Any) -> TaskInstance:
            return timed

    in_test = _Waits()
    HumanInputWaits(in_test, _Store()).start("n", execution_input(timed))
    assert in_test.started == []
