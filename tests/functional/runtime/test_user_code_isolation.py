"""Callbacks and triggers are user code too (issue 18): they run in the credential-less child a try runs in.

A hostile plugin module looks for the worker's credentials where they could leak (its environment, its parent's
``/proc/<ppid>/environ``, boto3 clients and stores reachable through the garbage collector, boto3's credential
chain) and forges store calls through the proxy it finds in memory: an XCom for another task, a run of another DAG,
a pause. It is called from a DAG's ``on_failure_callback`` (a ``DagCallbackRequest``), a task's
``on_failure_callback`` run for a try the scheduler failed (a ``TaskCallbackRequest``), and a polling trigger's
``run()`` (the trigger check). Every time the only credentials it holds are the DAG-code role's, every forged call
is refused, and the role cannot write the table.
"""

from __future__ import annotations

import datetime as dt
import json
import textwrap
import time

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws
from moto.core import enable_iam_authentication

from tests.functional.runtime.rt_harness import RuntimeEnv
from updraft.executors.callback_requests import DagCallbackRequest, TaskCallbackRequest
from updraft.model.deferrals import ResumeRequest
from updraft.model.records import TIKey
from updraft.model.states import TaskInstanceState
from updraft.runtime.dag_code_credentials import DagCodeCredentials
from updraft.runtime.trigger_check import check
from updraft.runtime.worker import handle_dispatch

WORKER_KEY, WORKER_SECRET = "AKIAWORKERWORKER0002", "worker-secret-access-key-never-for-callbacks"

HOSTILE = '''
import asyncio, gc, json, os

from airflow.triggers.base import BaseTrigger, TriggerEvent


def look_around(where, out, victim):
    import boto3, botocore.client
    from updraft.runtime.store_proxy import ScopeError, StoreProxy

    found = {"where": where, "env": {k: v for k, v in os.environ.items() if k.startswith(("AWS_", "UPDRAFT_"))}}
    with open(f"/proc/{os.getppid()}/environ", "rb") as f:
        found["parent_environ"] = f.read().decode(errors="replace")
    objects = gc.get_objects()
    found["clients"] = sum(isinstance(o, botocore.client.BaseClient) for o in objects)
    found["stores"] = sum(type(o).__name__ in ("DynamoStore", "MemoryStore", "Services") for o in objects)
    creds = boto3.Session().get_credentials()
    found["boto3_key"] = creds.access_key if creds else None
    (proxy,) = [o for o in objects if isinstance(o, StoreProxy)]
    found["refused"] = []
    for method, args in (("put_xcom", [victim, "forged", 1, None]),
                         ("cross_dag", ["trigger", [victim[0]], {"run_id": "forged", "conf": None,
                                                                 "logical_date": None}]),
                         ("set_paused", [victim[0], True])):
        try:
            proxy.channel.call(method, *args)
        except ScopeError as exc:
            found["refused"].append(str(exc))
    with open(out, "a") as f:
        f.write(json.dumps(found) + "\\n")


class HostileTrigger(BaseTrigger):
    def __init__(self, out, victim):
        super().__init__()
        self.out, self.victim = out, victim

    def serialize(self):
        return "hostile.HostileTrigger", {"out": self.out, "victim": self.victim}

    async def run(self):
        look_around("trigger", self.out, self.victim)
        yield TriggerEvent({"looked": True})
'''

DAG = """
import os
from hostile import look_around

OUT = os.environ["HOSTILE_OUT"]

def victim_of(context):
    return [context["dag"].dag_id, context["run_id"], "ok", -1]

with DAG("hostile_cb", schedule=None, start_date=START,
         on_failure_callback=lambda context: look_around("dag", OUT, victim_of(context))):
    PythonOperator(task_id="ok", python_callable=lambda: "victim's own") >> PythonOperator(
        task_id="boom", python_callable=lambda: 1 / 0,
        on_failure_callback=lambda context: look_around("task", OUT, victim_of(context)))
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    root = tmp_path_factory.mktemp("user_code_isolation")
    plugins = root / "plugins"
    plugins.mkdir()
    (plugins / "hostile.py").write_text(textwrap.dedent(HOSTILE))
    with mock_aws(), pytest.MonkeyPatch.context() as patch:
        patch.setenv("UPDRAFT_TABLE", "the-worker-table")
        patch.setenv("AWS_ACCESS_KEY_ID", WORKER_KEY)  # what the worker Lambda's environment holds
        patch.setenv("AWS_SECRET_ACCESS_KEY", WORKER_SECRET)
        patch.setenv("HOSTILE_OUT", str(root / "found.jsonl"))
        runtime = RuntimeEnv(root, plugins_folder=plugins)
        runtime.out = root / "found.jsonl"
        runtime.plugins = plugins
        runtime.add("hostile_cb", DAG)
        iam = boto3.client("iam", region_name="us-east-1")
        trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"},
                                                         "Action": ["sts:AssumeRole", "sts:TagSession"]}]}
        role = iam.create_role(RoleName="dag-code", AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"]
        runtime.credentials = DagCodeCredentials(lambda: boto3.client("sts", region_name="us-east-1"), role)
        yield runtime


def _found(env, where: str) -> dict:
    (found,) = [f for f in map(json.loads, env.out.read_text().splitlines()) if f["where"] == where]
    return found


def _assert_isolated(env, found: dict) -> None:
    for text in (json.dumps(found["env"]), found["parent_environ"]):
        assert WORKER_KEY not in text and WORKER_SECRET not in text
        assert "the-worker-table" not in text
    assert found["clients"] == 0 and found["stores"] == 0  # nothing of the worker's in the child's memory
    role_env = env.credentials.environment()
    assert found["boto3_key"] == role_env["AWS_ACCESS_KEY_ID"] != WORKER_KEY
    assert len(found["refused"]) == 3, found["refused"]
    assert "may not write task instance data" in found["refused"][0]
    assert "may only read other DAGs' runs, not 'trigger'" in found["refused"][1]
    assert "not allowed from task code" in found["refused"][2]
    with enable_iam_authentication():
        dynamodb = boto3.client("dynamodb", region_name="us-east-1", aws_access_key_id=role_env["AWS_ACCESS_KEY_ID"],
                                aws_secret_access_key=role_env["AWS_SECRET_ACCESS_KEY"],
                                aws_session_token=role_env["AWS_SESSION_TOKEN"])
        with pytest.raises(ClientError, match="AccessDenied"):
            dynamodb.put_item(TableName=env.store.config.table_name,
                              Item={"pk": {"S": "DAG#hostile_cb"}, "sk": {"S": "META"}})


def _assert_nothing_forged(env, run_id: str) -> None:
    assert env.xcom("hostile_cb", run_id, "ok", key="forged") is None
    assert env.xcom("hostile_cb", run_id, "ok") == "victim's own"
    assert env.store.get_run("hostile_cb", "forged") is None
    assert env.store.get_dag_meta("hostile_cb").is_paused is False


def _work(env, items) -> None:
    for item in items:
        handle_dispatch(item, store=env.store, loader=env.loader, scheduler=env.scheduler, now_fn=env.clock,
                        log_sink=env.logs, credentials=env.credentials)


def test_dag_and_task_callbacks_run_without_the_workers_credentials_and_cannot_write(env) -> None:
    run = env.trigger("hostile_cb")
    callbacks = []
    for _ in range(5):
        env.scheduler.run_pass()
        items = env.executor.take()
        callbacks += [i for i in items if isinstance(i, DagCallbackRequest)]
        _work(env, items)
    assert env.states("hostile_cb", run.run_id) == {"ok": "success", "boom": "failed"}
    assert len(callbacks) == 1  # the run's on_failure_callback, run by the worker from the scheduler's request
    _assert_isolated(env, _found(env, "dag"))
    log = env.logs.read(callbacks[0].key, 1)
    assert "Executing on_failure dag callback" in log  # the callbacks' log came through the worker
    # The scheduler fails a try whose worker went quiet and asks a worker to run its failure callback.
    request = TaskCallbackRequest.for_try(TIKey("hostile_cb", run.run_id, "boom"), 1, request_id="zombie-boom",
                                          retried=False, message="the try's worker went quiet")
    env.out.write_text("")  # the try's own (in-child) callback wrote too; look at the request's only
    _work(env, [request, request])  # a duplicate delivery runs nothing
    _assert_isolated(env, _found(env, "task"))
    _assert_nothing_forged(env, run.run_id)


def test_a_hostile_trigger_cannot_read_the_credentials_or_write_the_table(env) -> None:
    run = env.trigger("hostile_cb", run_id="deferred")
    key = TIKey("hostile_cb", run.run_id, "ok")
    env.store.put_xcom(key, "return_value", "victim's own", now=env.clock())
    record = {"classpath": "hostile.HostileTrigger", "kind": "poll", "times_out": False, "event": None,
              "timeout_at": None, "kwargs": {"out": str(env.out), "victim": list(key)}}
    deferred = TIKey("hostile_cb", run.run_id, "boom")
    assert env.store.apply_ti_change(deferred, expected=None, state=TaskInstanceState.DEFERRED,
                                     fields={"try_id": "deferred-try", "try_number": 1, "trigger": record})
    state = {"kind": "poll", "resume": {"kind": "resume_deferred", "dag_id": "hostile_cb", "run_id": run.run_id,
                                        "task_id": "boom", "map_index": -1, "try_number": 1,
                                        "try_id": "deferred-try"}}
    assert ResumeRequest.from_payload(state["resume"]) is not None
    env.out.write_text("")
    answer = check(state, store=env.store, now=env.clock() + dt.timedelta(seconds=1),
                   credentials=env.credentials.environment(), plugins_folder=str(env.plugins))
    assert answer["outcome"] == "fired"
    assert env.store.get_ti(deferred).trigger["event"] == {"looked": True}  # written by the check, fenced
    _assert_isolated(env, _found(env, "trigger"))
    _assert_nothing_forged(env, run.run_id)


GROWS = """
import time

def grow(megabytes):
    hog = bytearray(megabytes * 2**20)
    hog[::4096] = b"x" * len(hog[::4096])  # resident, not just reserved
    print(f"holding {megabytes} MB", flush=True)
    time.sleep(0.2 if megabytes < 100 else 120)

with DAG("grows", schedule=None, start_date=START):
    PythonOperator(task_id="small", python_callable=grow, op_args=[16])
    PythonOperator(task_id="big", python_callable=grow, op_args=[400])
"""


def test_a_try_whose_child_grows_its_memory_is_handed_off_before_the_lambda_limit(env) -> None:
    """The worker Lambda's memory guard measures the whole tree (the worker, its task server, the try's child),
    shared pages once: a child that only holds a little stays, one that grows is handed to Fargate."""
    from updraft.runtime.handoff import HandedOff, LambdaLimits, process_tree_rss_mb
    from updraft.runtime.supervisor import shared_supervisor

    env.add("grows", GROWS)
    run = env.trigger("grows")
    env.scheduler.run_pass()
    items = {item.key.task_id: item for item in env.executor.take()}
    shared_supervisor().start()
    # A scaled-down function: 90 % of it is what the tree holds now (the task server started) plus 150 MB.
    limits = LambdaLimits(remaining_ms=lambda: 600_000, memory_mb=int((process_tree_rss_mb() + 150) / 0.9),
                          poll_s=0.05)

    def work(task_id: str):
        return handle_dispatch(items[task_id], store=env.store, loader=env.loader, scheduler=env.scheduler,
                               now_fn=env.clock, log_sink=env.logs, limits=limits)

    assert work("small").state is TaskInstanceState.SUCCESS
    started = time.monotonic()
    moved = work("big")
    assert isinstance(moved, HandedOff) and "memory limit" in moved.reason, moved
    assert time.monotonic() - started < 60  # long before the task's two minutes: its process was killed
    ti = env.ti("grows", run.run_id, "big")
    assert ti.state is TaskInstanceState.QUEUED and ti.executor == "fargate" and ti.try_number == 1
    assert "memory limit" in env.log("grows", run.run_id, "big")
