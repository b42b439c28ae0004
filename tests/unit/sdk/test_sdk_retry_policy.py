"""Task retry policies as Airflow 3.3 defines them (``airflow.sdk.definitions.retry_policy`` and common-compat's
``ChainRetryPolicy``), and what a retry policy's delay does to the scheduler's retry time."""

from __future__ import annotations

import datetime as dt

import pytest

from airflow.providers.common.compat.sdk import ChainRetryPolicy
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG, ExceptionRetryPolicy, RetryAction, RetryDecision, RetryPolicy, RetryRule
from updraft.model.records import TaskInstance
from updraft.model.states import TaskInstanceState
from updraft.scheduling.decisions.retries import failure_outcome
from updraft.sdk.retry_policy import evaluate_retry_policy
from updraft.serialization.model import SerializedTask

START = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
POLICY = ExceptionRetryPolicy(rules=[
    RetryRule(exception=[PermissionError, "builtins.LookupError"], action=RetryAction.FAIL),
    RetryRule(exception=OSError, retry_delay=dt.timedelta(seconds=7), reason="transient", match_subclasses=False),
])


@pytest.mark.parametrize(("exc", "expected"), [
    (PermissionError("x"), RetryDecision(RetryAction.FAIL, None, "Matched rule for PermissionError")),
    (KeyError("x"), RetryDecision(RetryAction.FAIL, None, "Matched rule for KeyError")),  # a LookupError
    (OSError("x"), RetryDecision(RetryAction.RETRY, dt.timedelta(seconds=7), "transient")),
    (ConnectionError("x"), RetryDecision(RetryAction.DEFAULT)),  # an OSError subclass: exact match only
    (ValueError("x"), RetryDecision(RetryAction.DEFAULT)),
])
def test_exception_retry_policy(exc, expected):
    assert POLICY.evaluate(exc, try_number=1, max_tries=3) == expected


def test_rules_round_trip_and_refuse_a_bare_name():
    assert ExceptionRetryPolicy.deserialize(POLICY.serialize()).serialize() == POLICY.serialize()
    with pytest.raises(ValueError, match="must be a dotted import path"):
        RetryRule(exception="ValueError")


def test_chain_takes_the_first_decision():
    class Raising(RetryPolicy):
        def evaluate(self, exception, try_number, max_tries, context=None):
            raise RuntimeError("broken")

    chain = ChainRetryPolicy([Raising(), ExceptionRetryPolicy(rules=[]), POLICY])
    decision = chain.evaluate(PermissionError(), try_number=1, max_tries=1)
    assert decision.action == RetryAction.FAIL
    assert decision.reason == ("ExceptionRetryPolicy: Matched rule for PermissionError (after Raising: raised "
                               "RuntimeError; ExceptionRetryPolicy: no decision)")
    with pytest.raises(TypeError, match="wrap the single policy in a list"):
        ChainRetryPolicy(POLICY)


def test_a_task_takes_a_policy_and_refuses_anything_else():
    with DAG("d", schedule=None, start_date=START):
        task = EmptyOperator(task_id="t", retry_policy=POLICY)
        assert evaluate_retry_policy(task, OSError(), 1).retry_delay == dt.timedelta(seconds=7)
        assert evaluate_retry_policy(EmptyOperator(task_id="u"), OSError(), 1) is None
        with pytest.raises(TypeError, match="'retry_policy' for task 'v' expects a RetryPolicy"):
            EmptyOperator(task_id="v", retry_policy="retry")


def test_a_policy_s_delay_replaces_the_task_s():
    task = SerializedTask(task_id="t", task_type="X", operator_module="m", custom_operator_name=None, label="t",
                          task_display_name="t", task_group_id=None, retries=2,
                          retry_delay=dt.timedelta(hours=1), retry_exponential_backoff=True)
    ti = TaskInstance(dag_id="d", run_id="r", task_id="t", map_index=-1, state=TaskInstanceState.RUNNING,
                      try_number=1)
    state, fields = failure_outcome(task, ti, START, retry_delay=dt.timedelta(seconds=5))
    assert (state, fields["next_retry_at"]) == (TaskInstanceState.UP_FOR_RETRY, START + dt.timedelta(seconds=5))
    state, _ = failure_outcome(task, ti, START, force_fail=True, retry_delay=dt.timedelta(seconds=5))
    assert state == TaskInstanceState.FAILED
