"""Long tasks on moto: a Lambda try near the function's limit is handed to Fargate (run through the Fargate
entrypoint, ``main()``), finishes there without spending a retry, and the task's next run goes to Fargate
directly; a Fargate try stopped by SIGTERM fails as a killed try and keeps its log. Lambda's limit is scaled
down: a fake context with about a second left before the hand-off margin."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import threading
import time
from collections.abc import Callable
from types import SimpleNamespace

import pytest

from tests.functional.ecs_helpers import fargate_cluster
from tests.functional.lambda_helpers import REGION, WORKER, claimed_dispatch, spied_services, worker_account
from updraft.executors.recording import RecordingExecutor
from updraft.executors.routing import RoutingExecutor
from updraft.model.records import TIKey
from updraft.model.states import TaskInstanceState
from updraft.model.usage import Usage
from updraft.scheduling.commands.triggering import trigger_dag

TABLE = "updraft-long-test"
BUCKET = "updraft-long-data"
MARGIN_S = 1.0

DAG_FILE = '''
import datetime, os, signal, time
from airflow.sdk import DAG
from airflow.providers.standard.operators.python import PythonOperator


def slow():
    print("the long part starts")
    time.sleep(2)
    print("the long part ends")
    return "done"


def stopped():
    print("before the stop")
    time.sleep(30)  # the test stops the worker meanwhile, as ECS's StopTask does (SIGTERM to the container)
    print("never printed")


with DAG("long_dag", schedule=None, start_date=datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)):
    PythonOperator(task_id="long", python_callable=slow, retries=0)
    PythonOperator(task_id="stopped", python_callable=stopped, retries=1)
'''


def fake_lambda_context(seconds_left: float, memory_mb: int = 10240, *,
                        remaining_s: Callable[[], float] | None = None) -> SimpleNamespace:
    """A Lambda context whose function times out ``seconds_left`` from now (or, given ``remaining_s``, that says)."""
    deadline = time.monotonic() + seconds_left
    remaining = remaining_s or (lambda: deadline - time.monotonic())
    return SimpleNamespace(function_name=WORKER, memory_limit_in_mb=memory_mb, aws_request_id="req-long",
                           invoked_function_arn=f"arn:aws:lambda:{REGION}:123456789012:function:{WORKER}",
                           get_remaining_time_in_millis=lambda: int(remaining() * 1000))


def running_out_once_printed(line: str) -> Callable[[], float]:
    """Lambda's time left: plenty until a try running in this worker has printed ``line``, then 0.3 s less than
    the hand-off margin, so the hand-off comes mid-task however long a loaded machine takes to start the task's
    process (a fixed deadline raced it)."""
    from updraft.runtime import logs

    def remaining() -> float:
        printed = any(line in buffer.text_so_far() for _, _, _, buffer in list(logs._open.values()))
        return MARGIN_S - 0.3 if printed else 60.0

    return remaining


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """One moto account for the module (each test claims its own run): table, bucket, worker function, cluster."""
    with pytest.MonkeyPatch.context() as monkeypatch, worker_account(
            tmp_path_factory.mktemp("long"), monkeypatch, table=TABLE, bucket=BUCKET, dag_id="long_dag",
            dag_file=DAG_FILE, env={"UPDRAFT_LAMBDA_HANDOFF_MARGIN_SECONDS": str(MARGIN_S),
                                    "UPDRAFT_LIVE_LOG_SECONDS": "0"}) as account:
        ecs, subnet, group = fargate_cluster(REGION)
        for name, value in {"UPDRAFT_ECS_CLUSTER": "updraft", "UPDRAFT_ECS_TASK_DEFINITION": "updraft-worker",
                            "UPDRAFT_ECS_SUBNETS": subnet, "UPDRAFT_ECS_SECURITY_GROUPS": group}.items():
            monkeypatch.setenv(name, value)
        from functions.worker import handler

        invokes = spied_services(handler, monkeypatch, account.lam)
        yield SimpleNamespace(handler=handler, store=account.store, s3=account.s3, ecs=ecs, invokes=invokes)


def _claim(store, task_id: str):
    """A new run of long_dag with ``task_id`` claimed: its dispatch (as the scheduler would send it)."""
    return claimed_dispatch(store, "long_dag", task_id)


def _log(env, key: TIKey, try_number: int) -> str:
    path = f"logs/{key.dag_id}/{key.run_id}/{key.task_id}/{key.map_index}/{try_number}.log"
    return env.s3.get_object(Bucket=BUCKET, Key=path)["Body"].read().decode()


def _fargate_dispatches(env) -> list[dict]:
    arns = env.ecs.list_tasks(cluster="updraft")["taskArns"]
    tasks = env.ecs.describe_tasks(cluster="updraft", tasks=arns)["tasks"] if arns else []
    found = []
    for task in tasks:
        (override,) = task["overrides"]["containerOverrides"]
        found += [json.loads(e["value"]) for e in override["environment"] if e["name"] == "UPDRAFT_DISPATCH"]
    return found


@pytest.mark.slow
def test_a_try_past_the_lambda_limit_finishes_on_fargate_without_a_retry(env, monkeypatch, capsys):
    dispatch = _claim(env.store, "long")
    key = dispatch.key

    result = env.handler.handler(dispatch.to_payload(), fake_lambda_context(60, remaining_s=running_out_once_printed("the long part starts")))

    assert result["status"] == "handed_off" and result["executor"] == "fargate" and result["try_number"] == 1
    assert "time limit" in result["reason"]
    queued = env.store.get_ti(key)
    assert queued.state == TaskInstanceState.QUEUED and queued.try_number == 1 and queued.executor == "fargate"
    assert queued.try_id != dispatch.try_id and "handed off to Fargate" in queued.note
    lambda_used = Usage.from_record(queued.usage)  # the Lambda part's, kept by the hand-off's write
    assert lambda_used.try_number == 1 and lambda_used.lambda_requests == 1
    # The record keeps each figure to 6 decimals (Usage.to_record), so 10 x seconds may be 5e-6 off the GB-s.
    assert lambda_used.lambda_gb_s == pytest.approx(10 * lambda_used.seconds, abs=1e-5) and lambda_used.seconds > 0
    (sent,) = [d for d in _fargate_dispatches(env) if d["run_id"] == key.run_id]
    assert sent["handed_off"] is True and sent["try_number"] == 1 and sent["try_id"] == queued.try_id
    lambda_part = _log(env, key, 1)
    assert "the long part starts" in lambda_part and "the long part ends" not in lambda_part
    assert "handed off to Fargate" in lambda_part
    # Lambda delivers the old dispatch again: its token lost the fence, nothing runs twice.
    assert env.handler.handler(dispatch.to_payload(), fake_lambda_context(60))["status"] == "not_runnable"

    monkeypatch.setenv("UPDRAFT_DISPATCH", json.dumps(sent))
    assert env.handler.main() == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["state"] == "success"
    done = env.store.get_ti(key)
    assert done.state == TaskInstanceState.SUCCESS and done.try_number == 1  # retries=0: no retry was spent
    used = Usage.from_record(done.usage)  # both parts of the try: the Lambda's and Fargate's first minute
    assert used.lambda_gb_s == pytest.approx(lambda_used.lambda_gb_s) and used.lambda_requests == 1
    assert used.fargate_vcpu_s >= 0.5 * 60 and used.seconds > lambda_used.seconds
    whole = _log(env, key, 1)
    assert whole.startswith(lambda_part) and whole.rstrip().count("the long part ends") == 1
    assert env.store.dags_long_tasks(["long_dag"]) == {("long_dag", "long"): {"executor": "fargate"}}

    # The task's next run goes to Fargate directly, never to the worker Lambda.
    run = trigger_dag(env.store, "long_dag", now=dt.datetime.now(dt.UTC))
    env.handler.services().scheduler.schedule_run("long_dag", run.run_id)
    routed = [d for d in _fargate_dispatches(env) if d["run_id"] == run.run_id]
    assert [d["task_id"] for d in routed] == ["long"] and "handed_off" not in routed[0]
    assert [p["task_id"] for p in env.invokes if p["run_id"] == run.run_id] == ["stopped"]

    env.store.forget_long_task("long_dag", "long")
    assert env.store.dags_long_tasks(["long_dag"]) == {}


def test_a_try_near_the_memory_limit_is_handed_off_too(env):
    dispatch = _claim(env.store, "long")
    result = env.handler.handler(dispatch.to_payload(), fake_lambda_context(60, memory_mb=1))
    assert result["status"] == "handed_off" and "memory limit" in result["reason"]
    assert "memory limit" in env.store.get_ti(dispatch.key).note
    # Fargate gets at least twice the function's memory (1 MB here: the smallest Fargate size), now and later.
    (sent,) = [d for d in _fargate_dispatches(env) if d["run_id"] == dispatch.key.run_id]
    assert (sent["compute"]["cpu"], sent["compute"]["memory"]) == (256, 512)
    assert env.store.dags_long_tasks(["long_dag"]) == {
        ("long_dag", "long"): {"executor": "fargate", "cpu": 256, "memory": 512}}


@pytest.mark.slow
def test_a_stopped_fargate_try_fails_as_a_killed_one_and_keeps_its_log(env, monkeypatch, capsys):
    previous = signal.getsignal(signal.SIGTERM)
    dispatch = _claim(env.store, "stopped")
    monkeypatch.setenv("UPDRAFT_DISPATCH", json.dumps({**dispatch.to_payload(), "executor": "fargate"}))
    started = time.monotonic()
    stop = threading.Timer(3.0, os.kill, (os.getpid(), signal.SIGTERM))  # the worker's own process, not the task's
    stop.start()
    assert env.handler.main() == 0
    stop.cancel()
    assert time.monotonic() - started < 10  # the 30 s sleep was interrupted
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["state"] == "failed"
    ti = env.store.get_ti(dispatch.key)  # it has a retry left
    assert ti.state == TaskInstanceState.UP_FOR_RETRY and "stopped (SIGTERM)" in ti.note
    log = _log(env, dispatch.key, 1)
    assert "before the stop" in log and "WorkerStopped" in log and "never printed" not in log
    assert signal.getsignal(signal.SIGTERM) is previous  # main() put the process's handler back


def test_without_fargate_the_try_fails_saying_which_limit_it_reached(env, monkeypatch):
    monkeypatch.setattr(env.handler.services().scheduler, "executor", RoutingExecutor({"lambda": RecordingExecutor()}))
    dispatch = _claim(env.store, "long")
    result = env.handler.handler(dispatch.to_payload(), fake_lambda_context(60, memory_mb=1))
    assert result["status"] == "ran" and result["state"] == "failed"
    ti = env.store.get_ti(dispatch.key)
    assert ti.state == TaskInstanceState.FAILED and ti.note.endswith("no Fargate executor to hand it to")


def test_deleting_the_dag_forgets_its_long_tasks(env):  # last: it deletes the module's DAG
    env.store.remember_long_task("long_dag", "long", executor="fargate", reason="r", now=dt.datetime.now(dt.UTC))
    env.store.delete_dag_items("long_dag")
    assert env.store.dags_long_tasks(["long_dag"]) == {}
