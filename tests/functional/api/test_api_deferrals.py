"""A deferred task instance through the REST API, its wait a Step Functions execution on moto: the instance shows
its trigger, and a mark or a clear stops the execution (the API's role has states:StopExecution)."""

from __future__ import annotations

import datetime as dt
import json

import boto3
import pytest

from updraft.executors.step_functions import StepFunctionsWaits, execution_arn
from updraft.model.deferrals import execution_input, execution_name
from updraft.model.records import TIKey
from updraft.model.states import DagRunState, TaskInstanceState
from updraft.triggers.state_machine import definition

T0 = dt.datetime(2024, 3, 1, tzinfo=dt.UTC)
RUNS = "/api/v2/dags/etl/dagRuns"
TRIGGER = {"classpath": "airflow.providers.standard.triggers.temporal.DateTimeTrigger",
           "kwargs": {"moment": {"__classname__": "datetime.datetime", "__version__": 1,
                                 "__data__": {"iso": "2024-03-01T01:00:00+00:00"}}, "end_from_trigger": False},
           "kind": "wait", "resume_at": "2024-03-01T01:00:00+00:00", "times_out": False, "event": None,
           "end_from_trigger": False, "created_at": T0.isoformat(), "timeout_at": None}


@pytest.fixture
def machine(aws_env, monkeypatch) -> str:
    client = boto3.client("stepfunctions", region_name="us-east-1")
    arn = client.create_state_machine(
        name="updraft-api-test-deferrals", roleArn="arn:aws:iam::123456789012:role/sfn",
        definition=json.dumps(definition("arn:aws:lambda:us-east-1:123456789012:function:worker")))["stateMachineArn"]
    monkeypatch.setenv("UPDRAFT_DEFERRAL_STATE_MACHINE", arn)
    return arn


def _deferred(api, store, machine: str, run_id: str) -> tuple[str, object]:
    assert api("POST", RUNS, body={"logical_date": None, "dag_run_id": run_id}).status == 200
    store.set_run_state("etl", run_id, expected=[DagRunState.QUEUED], state=DagRunState.RUNNING, now=T0)
    key = TIKey("etl", run_id, "extract")
    assert store.transition_ti(key, expected=[None], state=TaskInstanceState.DEFERRED, fields={
        "try_number": 1, "try_id": f"tok-{run_id}", "start_date": T0, "trigger": TRIGGER, "next_method": "done",
        "next_kwargs": {}})
    ti = store.get_ti(key)
    waits = StepFunctionsWaits(boto3.client("stepfunctions", region_name="us-east-1"), machine)
    name = execution_name(key, 1, f"tok-{run_id}")
    waits.start(name, execution_input(ti))
    waits.start(name, execution_input(ti))  # a repeated start: ExecutionAlreadyExists on Step Functions, harmless
    return name, waits


def _status(waits, name: str) -> str:
    return waits.client.describe_execution(executionArn=execution_arn(waits.state_machine_arn, name))["status"]


def test_a_deferred_instance_shows_its_trigger_and_a_mark_a_clear_or_a_deletion_stops_its_wait(api, store,
                                                                                                 machine):
    name, waits = _deferred(api, store, machine, "r1")
    assert _status(waits, name) == "RUNNING"
    shown = api.get(f"{RUNS}/r1/taskInstances/extract").body
    assert shown["state"] == "deferred" and shown["triggerer_job"] is None
    assert shown["trigger"]["classpath"] == TRIGGER["classpath"]
    assert json.loads(shown["trigger"]["kwargs"])["end_from_trigger"] is False
    assert shown["trigger"]["created_date"] == T0.isoformat() and isinstance(shown["trigger"]["id"], int)
    marked = api("PATCH", f"{RUNS}/r1/taskInstances/extract", body={"new_state": "failed"})
    assert marked.status == 200, marked.body
    assert _status(waits, name) == "ABORTED"
    after = store.get_ti(TIKey("etl", "r1", "extract"))
    assert (after.state, after.trigger, after.next_method) == (TaskInstanceState.FAILED, None, None)

    # Clearing a deferred instance, or deleting its DAG, stops its wait too.
    name, waits = _deferred(api, store, machine, "r2")
    cleared = api("POST", "/api/v2/dags/etl/clearTaskInstances",
                  body={"dry_run": False, "task_ids": ["extract"], "dag_run_id": "r2", "only_failed": False})
    assert cleared.status == 200, cleared.body
    assert _status(waits, name) == "ABORTED"
    assert store.get_ti(TIKey("etl", "r2", "extract")).next_method is None
    other, _ = _deferred(api, store, machine, "r3")
    assert api("DELETE", "/api/v2/dags/etl").status == 204  # a deleted DAG's deferred tries stop waiting
    assert _status(waits, other) == "ABORTED"


def test_a_trigger_recorded_without_its_creation_time_answers_the_try_s_start(api, store, machine):
    """A trigger record without ``created_at`` (an older release's, or written by hand) is no 500: Airflow's
    required ``created_date`` is the try's start."""
    assert api("POST", RUNS, body={"logical_date": None, "dag_run_id": "old"}).status == 200
    key = TIKey("etl", "old", "extract")
    record = {k: v for k, v in TRIGGER.items() if k != "created_at"}
    assert store.transition_ti(key, expected=[None], state=TaskInstanceState.DEFERRED, fields={
        "try_number": 1, "try_id": "tok-old", "start_date": T0, "trigger": record, "next_method": "done"})
    shown = api.get(f"{RUNS}/old/taskInstances/extract")
    assert shown.status == 200, shown.body
    assert shown.body["trigger"]["created_date"] == "2024-03-01T00:00:00Z"
    assert shown.body["trigger"]["classpath"] == TRIGGER["classpath"]
