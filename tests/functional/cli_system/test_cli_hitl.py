"""`updraft hitl list|respond`: Human-in-the-loop requests through the REST API; a response resumes the task."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG
from tests.functional.cli_system.cli_helpers import invoke, utcnow
from updraft.model import hitl
from updraft.model.records import TIKey
from updraft.model.states import TaskInstanceState
from updraft.scheduling.commands.triggering import trigger_dag

pytestmark = pytest.mark.slow

START = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


def test_list_the_waiting_requests_and_respond(local_system):
    with DAG("asks", schedule=None, start_date=START) as dag:
        EmptyOperator(task_id="ask")
    local_system.add_dags(dag)
    run = trigger_dag(local_system.store, "asks", now=utcnow(), run_id="r1")
    key = TIKey("asks", run.run_id, "ask")
    record = hitl.request_record({"options": ["ship", "hold"], "subject": "Release?", "params": {"n": 1}},
                                 try_number=1, now=utcnow())
    local_system.store.transition_ti(key, expected=[None], state=TaskInstanceState.DEFERRED, fields={
        "try_number": 1, "try_id": "tok", "next_method": "execute_complete", "next_kwargs": {}, "hitl": record,
        "trigger": {"classpath": hitl.CLASSPATH, "kwargs": {}, "kind": "wait", "timeout_at": None}})

    listed = invoke("hitl", "list", "--output", "json")
    assert listed.exit_code == 0, listed.output
    rows = json.loads(listed.output)
    assert [(r["task_id"], r["subject"], r["options"], r["state"]) for r in rows] == [
        ("ask", "Release?", "ship, hold", "deferred")]

    answered = invoke("hitl", "respond", "asks", "r1", "ask", "--option", "ship", "--param", "n=3", "--output", "json")
    assert answered.exit_code == 0, answered.output
    assert json.loads(answered.output)[0]["chosen_options"] == "ship"
    ti = local_system.store.get_ti(key)
    assert ti.state == TaskInstanceState.SCHEDULED and ti.next_kwargs["event"]["params_input"] == {"n": 3}
    assert json.loads(invoke("hitl", "list", "--output", "json").output) == []  # none waits any more
    assert [r["chosen_options"] for r in json.loads(invoke("hitl", "list", "--all", "--output", "json").output)] == [
        "ship"]
    again = invoke("hitl", "respond", "asks", "r1", "ask", "--option", "hold")
    assert again.exit_code != 0 and "already been updated" in again.output
