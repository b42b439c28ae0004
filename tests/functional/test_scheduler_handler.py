"""The scheduler Lambda handler, invoked with the sample events against moto (DynamoDB, Lambda)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import boto3
import pytest
from moto import mock_aws

from tests.functional.ecs_helpers import fargate_cluster
from tests.functional.lambda_helpers import SpyLambda, echo_function_zip, lambda_context
from tests.functional.scheduling.harness import store_dags
from updraft.executors.base import Dispatch
from updraft.handler_events import MalformedEvent
from updraft.model.records import TIKey
from updraft.model.states import TaskInstanceState
from updraft.scheduling.commands.triggering import trigger_dag
from updraft.scheduling.try_lifecycle import TryResult, finish_try, start_try
from updraft.store.config import StoreConfig
from updraft.store.dynamo import DynamoStore
from updraft.store.tables import create_table

ROOT = Path(__file__).resolve().parents[2]
EVENTS = ROOT / "events" / "scheduler"
TABLE = "updraft-scheduler-test"
WORKER = "updraft-worker"
REGION = "us-east-1"
SCHEDULER = "updraft-scheduler"
WIDE = 30  # three shares of 10 tries (SHARE_MIN made 10 where a test shares a claim)



def _event(name: str) -> dict:
    return json.loads((EVENTS / name).read_text())





def _dags():
    from airflow.providers.standard.operators.bash import BashOperator
    from airflow.sdk import DAG

    start = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
    with DAG("handler_daily", schedule="@daily", start_date=start, catchup=False) as daily:
        BashOperator(task_id="only", bash_command="echo only")
    with DAG("handler_chain", schedule=None, start_date=start) as chain:
        BashOperator(task_id="first", bash_command="echo 1") >> BashOperator(task_id="second", bash_command="echo 2")
    with DAG("handler_heavy", schedule=None, start_date=start) as heavy:
        BashOperator(task_id="train", bash_command="echo train", executor="fargate",
                     executor_config={"cpu": 1024, "memory": 4096})
    with DAG("handler_oom", schedule=None, start_date=start,
             default_args={"retries": 1, "retry_delay": dt.timedelta(minutes=5)}) as oom:
        BashOperator(task_id="train", bash_command="echo train", executor="fargate")
    with DAG("handler_wide", schedule=None, start_date=start, max_active_tasks=WIDE) as wide:
        for i in range(WIDE):
            BashOperator(task_id=f"t{i:02d}", bash_command="echo wide")
    return daily, chain, heavy, oom, wide


@pytest.fixture
def env(monkeypatch):
    for name, value in {"AWS_REGION": REGION, "UPDRAFT_TABLE": TABLE, "UPDRAFT_WORKER_FUNCTION": WORKER}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("UPDRAFT_BUCKET", raising=False)
    with mock_aws(config={"lambda": {"use_docker": False}}):
        config = StoreConfig(table_name=TABLE, region=REGION)
        create_table(config)
        iam = boto3.client("iam", region_name=REGION)
        role = iam.create_role(RoleName="worker", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
        lam = boto3.client("lambda", region_name=REGION)
        lam.create_function(FunctionName=WORKER, Runtime="python3.12", Role=role, Handler="handler.handler",
                            Code={"ZipFile": echo_function_zip()})
        store = DynamoStore(config)
        store_dags(store, *_dags(), now=dt.datetime.now(dt.UTC))
        from functions.scheduler import handler

        monkeypatch.setattr("updraft.services._shared", None)  # built from the environment above on first use
        spy = SpyLambda(lam, WORKER)
        handler.services()._clients["lambda"] = spy
        yield SimpleNamespace(handler=handler, store=store, invokes=spy.payloads)


@pytest.mark.slow
def test_tick_creates_due_runs_and_dispatches_their_first_tasks(env, capsys):
    result = env.handler.handler(_event("eventbridge_tick.json"), lambda_context("scheduler"))

    assert result["kind"] == "tick"
    (run_id,) = result["runs_created"]
    assert run_id.startswith("scheduled__")
    (dispatched,) = result["dispatched"]
    ti = env.store.get_ti(TIKey("handler_daily", run_id, "only"))
    assert ti.state == TaskInstanceState.QUEUED
    assert dispatched["try_id"] == ti.try_id
    (invoked,) = env.invokes  # the worker Lambda got exactly the dispatch, with the run its claimer read
    assert Dispatch.from_payload(invoked) == Dispatch.from_payload(dispatched)
    assert (invoked["run"]["state"], invoked["run"]["run_type"]) == ("running", "scheduled")
    emf = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"_aws"' in line]
    assert emf and emf[-1]["RunsCreated"] == [1.0] and emf[-1]["TriesDispatched"] == [1.0]
    assert emf[-1]["_aws"]["CloudWatchMetrics"][0]["Namespace"] == "Updraft"

    # A redelivered tick (EventBridge delivers at least once) creates and dispatches nothing more.
    again = env.handler.handler(_event("eventbridge_tick.json"), lambda_context("scheduler"))
    assert again["runs_created"] == [] and again["dispatched"] == []
    assert env.store.get_ti(TIKey("handler_daily", run_id, "only")).try_id == ti.try_id
    assert len(env.invokes) == 1


def test_task_finished_schedules_the_runs_next_task_once(env):
    event = _event("task_finished.json")
    run_id = event["detail"]["run_id"]
    trigger_dag(env.store, "handler_chain", now=dt.datetime.now(dt.UTC), run_id=run_id)

    # The run is queued: the mini scheduler starts it and dispatches its first task.
    first = env.handler.handler(event, lambda_context("scheduler"))
    assert first["kind"] == "task_finished" and first["runs_started"] == [run_id]
    assert [d["task_id"] for d in first["dispatched"]] == ["first"]

    # Play the worker for "first"; then the event it would send starts "second" at once.
    key = TIKey("handler_chain", run_id, "first")
    try_id = first["dispatched"][0]["try_id"]
    now = dt.datetime.now(dt.UTC)
    assert start_try(env.store, key, try_id, now=now)
    dag = env.handler.services().scheduler.dag("handler_chain", env.store.get_run("handler_chain", run_id).dag_hash)
    assert finish_try(env.store, key, try_id, TryResult(TaskInstanceState.SUCCESS), now=now, dag=dag)
    second = env.handler.handler(event, lambda_context("scheduler"))
    assert [d["task_id"] for d in second["dispatched"]] == ["second"]

    # The same event again: the store already has "second" queued, so nothing changes.
    before = env.store.get_run_tis("handler_chain", run_id)
    assert env.handler.handler(event, lambda_context("scheduler"))["dispatched"] == []
    assert env.store.get_run_tis("handler_chain", run_id) == before
    assert [p["task_id"] for p in env.invokes] == ["first", "second"]


def test_task_finished_for_an_unknown_run_does_nothing(env):
    event = _event("task_finished.json")
    event["detail"]["run_id"] = "manual__gone"
    result = env.handler.handler(event, lambda_context("scheduler"))
    assert result["dispatched"] == [] and result["runs_started"] == []


@pytest.mark.filterwarnings("ignore:No application metrics to publish")
@pytest.mark.parametrize(("event", "message"), [
    ({"Records": []}, "accepts an EventBridge 'Scheduled Event'"),
    ({"detail-type": "Scheduled Event", "source": "someone.else"}, "from source 'someone.else'"),
    ({"detail-type": "updraft.task_finished", "detail": {"dag_id": "handler_chain"}}, "detail.run_id"),
    ({"detail-type": "updraft.task_finished", "detail": "handler_chain"}, "'detail' object"),
    ([], "JSON object"),
])
@pytest.mark.slow
def test_malformed_event_is_a_clear_error(env, event, message):
    with pytest.raises(MalformedEvent, match=message):
        env.handler.handler(event, lambda_context("scheduler"))
    assert env.invokes == []


def _finished(dag_id: str, run_id: str) -> dict:
    event = _event("task_finished.json")
    event["detail"].update(dag_id=dag_id, run_id=run_id, task_id="train")
    return event


def test_fargate_task_without_a_cluster_stays_queued_and_is_counted(env, capsys):
    run = trigger_dag(env.store, "handler_heavy", now=dt.datetime.now(dt.UTC))
    result = env.handler.handler(_finished("handler_heavy", run.run_id), lambda_context("scheduler"))
    (dispatched,) = result["dispatched"]
    assert dispatched["executor"] == "fargate" and dispatched["compute"]["memory"] == 4096
    assert env.invokes == []  # never sent to the Lambda worker instead
    assert env.store.get_ti(TIKey("handler_heavy", run.run_id, "train")).state == TaskInstanceState.QUEUED
    emf = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"_aws"' in line]
    assert emf[-1]["DispatchesFailed"] == [1.0]


@pytest.mark.slow
def test_fargate_task_runs_on_the_configured_cluster(env, monkeypatch):
    ecs, subnet, group = fargate_cluster(REGION)
    for name, value in {"UPDRAFT_ECS_CLUSTER": "updraft", "UPDRAFT_ECS_TASK_DEFINITION": "updraft-worker",
                        "UPDRAFT_ECS_SUBNETS": subnet, "UPDRAFT_ECS_SECURITY_GROUPS": group}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr("updraft.services._shared", None)
    run = trigger_dag(env.store, "handler_heavy", now=dt.datetime.now(dt.UTC))

    event = _finished("handler_heavy", run.run_id)
    (dispatched,) = env.handler.handler(event, lambda_context("scheduler"))["dispatched"]
    assert env.handler.handler(event, lambda_context("scheduler"))["dispatched"] == []  # redelivered: no second task

    (arn,) = ecs.list_tasks(cluster="updraft")["taskArns"]
    (task,) = ecs.describe_tasks(cluster="updraft", tasks=[arn])["tasks"]
    (override,) = task["overrides"]["containerOverrides"]
    env_vars = {e["name"]: e["value"] for e in override["environment"]}
    assert json.loads(env_vars["UPDRAFT_DISPATCH"]) == dispatched
    assert env_vars["UPDRAFT_TABLE"] == TABLE and env_vars["UPDRAFT_WORKER_FUNCTION"] == WORKER


def test_every_pass_records_the_scheduler_s_heartbeat_for_the_health_route(env):
    before = dt.datetime.now(dt.UTC)
    env.handler.handler(_event("eventbridge_tick.json"), lambda_context("scheduler"))
    assert env.store.last_heartbeat("scheduler") >= before


def _on_the_cluster(monkeypatch) -> Any:
    ecs, subnet, group = fargate_cluster(REGION)
    for name, value in {"UPDRAFT_ECS_CLUSTER": "updraft", "UPDRAFT_ECS_TASK_DEFINITION": "updraft-worker",
                        "UPDRAFT_ECS_SUBNETS": subnet, "UPDRAFT_ECS_SECURITY_GROUPS": group}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr("updraft.services._shared", None)
    return ecs


def _task_stopped(ecs, *, exit_code: int | None, reason: str) -> dict:
    """ECS's event for the cluster's one task, stopped: its own description (overrides included) as the event's
    detail, shaped as ``events/scheduler/ecs_task_stopped.json``."""
    (arn,) = ecs.list_tasks(cluster="updraft")["taskArns"]
    (task,) = ecs.describe_tasks(cluster="updraft", tasks=[arn])["tasks"]
    event = _event("ecs_task_stopped.json")
    detail = json.loads(json.dumps(task, default=str))
    detail.update(lastStatus="STOPPED", desiredStatus="STOPPED", stopCode="EssentialContainerExited",
                  stoppedReason="Essential container in task exited", startedBy="updraft",
                  containers=[{"name": "worker", "lastStatus": "STOPPED", "reason": reason,
                               **({"exitCode": exit_code} if exit_code is not None else {})}])
    event["detail"] = detail
    return event


def test_a_fargate_task_that_dies_fails_its_try_at_once_as_airflow_fails_a_task_killed_externally(env, monkeypatch):
    ecs = _on_the_cluster(monkeypatch)
    run = trigger_dag(env.store, "handler_oom", now=dt.datetime.now(dt.UTC))
    (dispatched,) = env.handler.handler(_finished("handler_oom", run.run_id), lambda_context("scheduler"))["dispatched"]
    key = TIKey("handler_oom", run.run_id, "train")
    assert start_try(env.store, key, dispatched["try_id"], now=dt.datetime.now(dt.UTC))  # the container's worker

    # Its task ran out of memory: ECS's event reaches the scheduler, the try fails (retried: it has a retry left).
    event = _task_stopped(ecs, exit_code=137, reason="OutOfMemoryError: Container killed due to memory usage")
    result = env.handler.handler(event, lambda_context("scheduler"))
    assert result["kind"] == "task_stopped"
    ti = env.store.get_ti(key)
    assert ti.state == TaskInstanceState.UP_FOR_RETRY and ti.next_retry_at is not None
    assert ti.note.startswith("killed externally: Fargate task arn:aws:ecs:") and "OutOfMemoryError" in ti.note
    assert "exit code 137" in ti.note and ti.note.endswith("while the try was running")
    assert ti.lease_expires_at is None and ti.try_id == dispatched["try_id"]

    # Redelivered (EventBridge delivers at least once): nothing changes.
    env.handler.handler(event, lambda_context("scheduler"))
    assert env.store.get_ti(key) == ti


@pytest.mark.parametrize(("exit_code", "state", "expected"), [
    (None, TaskInstanceState.QUEUED, TaskInstanceState.FAILED),  # the container never ran: no retry left (heavy)
    (0, TaskInstanceState.RUNNING, TaskInstanceState.RUNNING),  # it exited 0: its worker ended or handed it on
    (1, TaskInstanceState.SUCCESS, TaskInstanceState.SUCCESS),  # it crashed after its try ended: nothing lost
])
@pytest.mark.slow
def test_what_a_stopped_task_changes_depends_on_its_exit_and_its_try(env, monkeypatch, exit_code, state, expected):
    ecs = _on_the_cluster(monkeypatch)
    run = trigger_dag(env.store, "handler_heavy", now=dt.datetime.now(dt.UTC))
    (dispatched,) = env.handler.handler(_finished("handler_heavy", run.run_id),
                                        lambda_context("scheduler"))["dispatched"]
    key, now = TIKey("handler_heavy", run.run_id, "train"), dt.datetime.now(dt.UTC)
    if state != TaskInstanceState.QUEUED:
        assert start_try(env.store, key, dispatched["try_id"], now=now)
    if state == TaskInstanceState.SUCCESS:
        dag = env.handler.services().scheduler.dag("handler_heavy", run.dag_hash)
        assert finish_try(env.store, key, dispatched["try_id"], TryResult(TaskInstanceState.SUCCESS), now=now, dag=dag)
    env.handler.handler(_task_stopped(ecs, exit_code=exit_code, reason="CannotPullContainerError" if exit_code is None
                                      else "Essential container in task exited"), lambda_context("scheduler"))
    ti = env.store.get_ti(key)
    assert ti.state == expected
    if expected == TaskInstanceState.FAILED:
        assert "the container never ran" in ti.note and ti.note.endswith("while the try was queued")
        assert env.store.get_run("handler_heavy", run.run_id).state == "failed"  # the run ended with it


def test_a_stop_reported_for_an_older_try_changes_nothing(env, monkeypatch):
    ecs = _on_the_cluster(monkeypatch)
    run = trigger_dag(env.store, "handler_oom", now=dt.datetime.now(dt.UTC))
    (dispatched,) = env.handler.handler(_finished("handler_oom", run.run_id), lambda_context("scheduler"))["dispatched"]
    key = TIKey("handler_oom", run.run_id, "train")
    assert start_try(env.store, key, dispatched["try_id"], now=dt.datetime.now(dt.UTC))
    event = _task_stopped(ecs, exit_code=137, reason="OutOfMemoryError")
    variables = event["detail"]["overrides"]["containerOverrides"][0]["environment"]
    (dispatch,) = [v for v in variables if v["name"] == "UPDRAFT_DISPATCH"]
    dispatch["value"] = json.dumps({**json.loads(dispatch["value"]), "try_id": "an-earlier-try"})
    env.handler.handler(event, lambda_context("scheduler"))
    assert env.store.get_ti(key).state == TaskInstanceState.RUNNING


class _SchedulerInvokes:
    """The handler's Lambda client: a scheduler invoke is kept (its payload), a worker invoke goes to moto."""

    def __init__(self, client) -> None:
        self.client, self.scheduler, self.worker = client, [], []

    def invoke(self, **kwargs):
        assert kwargs["InvocationType"] == "Event"
        if kwargs["FunctionName"] == SCHEDULER:
            self.scheduler.append(json.loads(kwargs["Payload"]))
            return {"StatusCode": 202}
        self.worker.append(json.loads(kwargs["Payload"]))
        return self.client.invoke(**kwargs)


def test_a_wide_claim_is_shared_with_scheduler_invocations_each_claiming_its_own(env, monkeypatch):
    monkeypatch.setattr("updraft.scheduling.claim_shares.SHARE_MIN", 10)
    monkeypatch.setenv("UPDRAFT_SCHEDULER_FUNCTION", SCHEDULER)
    monkeypatch.setattr("updraft.services._shared", None)
    invokes = _SchedulerInvokes(boto3.client("lambda", region_name=REGION))
    env.handler.services()._clients["lambda"] = invokes
    env.store.set_pool("default_pool", 2 * WIDE)
    run = trigger_dag(env.store, "handler_wide", now=dt.datetime.now(dt.UTC))

    first = env.handler.handler(_finished("handler_wide", run.run_id), lambda_context("scheduler"))
    asks = invokes.scheduler
    assert [ask["detail"] for ask in asks] == [{"dag_id": "handler_wide", "run_id": run.run_id, "share": [n, 3]}
                                               for n in (1, 2)]
    claimed = [d["task_id"] for d in first["dispatched"]]
    for ask in asks:  # each share's invocation, as Lambda would run it
        claimed += [d["task_id"] for d in env.handler.handler(ask, lambda_context("scheduler"))["dispatched"]]
    assert sorted(claimed) == [f"t{i:02d}" for i in range(WIDE)]
    assert sorted(p["task_id"] for p in invokes.worker) == sorted(claimed)
    assert len(invokes.scheduler) == 2  # a share's invocation asks for no more shares

    sample = _event("claim_share.json")  # redelivered: nothing more
    sample["detail"]["run_id"] = run.run_id
    assert env.handler.handler(sample, lambda_context("scheduler"))["dispatched"] == []
