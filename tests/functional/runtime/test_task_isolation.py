"""Task code runs without Updraft's credentials (issue 18): the attacks of a DAG author, tried from a task.

The task looks for the worker's credentials where they could leak (its environment, its parent's
``/proc/<ppid>/environ``, boto3 clients reachable through the garbage collector, boto3's credential chain), and
forges store calls for another task through the proxy it finds in memory. With a DAG-code role configured the only
credentials it holds are the role's, and moto (IAM enforced) refuses a table write with them.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import threading
import time

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws
from moto.core import enable_iam_authentication

from tests.escapees import ESCAPE, gone_within, kill_survivors, new_marker
from tests.functional.runtime.rt_harness import RuntimeEnv
from updraft.model.states import TaskInstanceState
from updraft.runtime.dag_code_credentials import DagCodeCredentials
from updraft.runtime.supervisor import TaskSupervisor
from updraft.runtime.worker import handle_dispatch
from updraft.scheduling.try_lifecycle import start_try

pytestmark = pytest.mark.slow

WORKER_KEY, WORKER_SECRET = "AKIAWORKERWORKER0001", "worker-secret-access-key-never-for-user-code"

ATTACKER = """
import gc, json, os

def attack(ti):
    import boto3, botocore.client
    from updraft.model.records import TIKey
    from updraft.runtime.store_proxy import ScopeError, StoreProxy

    found = {"env": {k: v for k, v in os.environ.items() if k.startswith(("AWS_", "UPDRAFT_"))}}
    with open(f"/proc/{os.getppid()}/environ", "rb") as f:
        found["parent_environ"] = f.read().decode(errors="replace")
    objects = gc.get_objects()
    found["clients"] = sum(isinstance(o, botocore.client.BaseClient) for o in objects)
    found["stores"] = sum(type(o).__name__ in ("DynamoStore", "Services") for o in objects)
    creds = boto3.Session().get_credentials()
    found["boto3_key"] = creds.access_key if creds else None
    (proxy,) = [o for o in objects if isinstance(o, StoreProxy)]
    refused = []
    for attempt in (
        lambda: proxy.put_xcom(TIKey(ti.dag_id, ti.run_id, "victim"), "forged", 1),
        lambda: proxy.set_rendered_fields(TIKey(ti.dag_id, ti.run_id, "attack"), try_id="forged",
                                          rendered_fields={}),
        lambda: proxy.channel.call("set_paused", ti.dag_id, True),
    ):
        try:
            attempt()
        except ScopeError as exc:
            refused.append(str(exc))
    found["refused"] = refused
    print("attacker looked around")
    return found

with DAG("attacker", schedule=None, start_date=START):
    PythonOperator(task_id="victim", python_callable=lambda: "victim's own") >> PythonOperator(
        task_id="attack", python_callable=attack)
"""


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("UPDRAFT_TABLE", "the-worker-table")
    with mock_aws():
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", WORKER_KEY)  # what the worker Lambda's environment holds
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", WORKER_SECRET)
        runtime = RuntimeEnv(tmp_path)
        runtime.add("attacker", ATTACKER)
        yield runtime


def _run(env: RuntimeEnv, credentials: DagCodeCredentials | None) -> str:
    run = env.trigger("attacker")
    for _ in range(5):
        env.scheduler.run_pass()
        for item in env.executor.take():
            handle_dispatch(item, store=env.store, loader=env.loader, scheduler=env.scheduler, now_fn=env.clock,
                            log_sink=env.logs, credentials=credentials)
    assert env.states("attacker", run.run_id) == {"victim": "success", "attack": "success"}
    return run.run_id


def _assert_no_worker_secret(found: dict) -> None:
    for text in (json.dumps(found["env"]), found["parent_environ"]):
        assert WORKER_KEY not in text and WORKER_SECRET not in text
        assert "the-worker-table" not in text
    assert found["clients"] == 0 and found["stores"] == 0  # nothing of the worker's in the child's memory
    assert len(found["refused"]) == 3, found["refused"]
    assert "(attack) may not write task instance victim" in found["refused"][0]
    assert "not allowed from task code" in found["refused"][2]


def test_without_a_role_task_code_has_no_aws_credentials_and_cannot_forge_store_calls(env) -> None:
    run_id = _run(env, None)
    found = env.xcom("attacker", run_id, "attack")
    _assert_no_worker_secret(found)
    assert found["boto3_key"] is None and "AWS_ACCESS_KEY_ID" not in found["env"]
    assert env.xcom("attacker", run_id, "victim", key="forged") is None  # the forged XCom never landed
    assert env.xcom("attacker", run_id, "victim") == "victim's own"
    assert "attacker looked around" in env.log("attacker", run_id, "attack")  # the log came through the worker
    assert env.store.get_dag_meta("attacker").is_paused is False


def test_with_the_dag_code_role_the_role_is_all_task_code_holds_and_it_cannot_write_the_table(env) -> None:
    iam = boto3.client("iam", region_name="us-east-1")
    trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"},
                                                     "Action": ["sts:AssumeRole", "sts:TagSession"]}]}
    role = iam.create_role(RoleName="dag-code", AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"]
    credentials = DagCodeCredentials(lambda: boto3.client("sts", region_name="us-east-1"), role)
    run_id = _run(env, credentials)
    found = env.xcom("attacker", run_id, "attack")
    _assert_no_worker_secret(found)
    assert credentials.assumed == 1  # both tries used the one cached session
    role_env = credentials.environment()
    assert found["boto3_key"] == role_env["AWS_ACCESS_KEY_ID"] != WORKER_KEY
    assert {k: found["env"][k] for k in role_env} == role_env
    table = env.store.config.table_name
    with enable_iam_authentication():
        dynamodb = boto3.client("dynamodb", region_name="us-east-1", aws_access_key_id=role_env["AWS_ACCESS_KEY_ID"],
                                aws_secret_access_key=role_env["AWS_SECRET_ACCESS_KEY"],
                                aws_session_token=role_env["AWS_SESSION_TOKEN"])
        with pytest.raises(ClientError, match="AccessDenied"):
            dynamodb.put_item(TableName=table, Item={"pk": {"S": "DAG#attacker"}, "sk": {"S": "META"}})


SLEEPER = """
import os, signal, subprocess, time

def ignore_everything(ti):
    signal.signal(signal.SIGALRM, signal.SIG_IGN)  # execution_timeout cannot stop it from inside
    child = subprocess.Popen(["sleep", "1000"])
    with open(os.environ["MARKER"], "w") as f:
        f.write(str(child.pid))
    time.sleep(1000)

def crash():
    print("about to vanish", flush=True)
    os._exit(3)

with DAG("sleeper", schedule=None, start_date=START):
    for case in ("timeout", "heartbeat"):
        PythonOperator(task_id=case, python_callable=ignore_everything,
                       execution_timeout=datetime.timedelta(seconds=1))
    PythonOperator(task_id="crash", python_callable=crash)
"""


def test_the_worker_kills_a_try_on_a_lost_heartbeat_or_past_its_timeout_and_nothing_it_started_survives(
        env, tmp_path, monkeypatch) -> None:
    env.add("sleeper", SLEEPER)
    run = env.trigger("sleeper")
    env.scheduler.run_pass()
    items = {i.key.task_id: i for i in env.executor.take()}
    supervisor = TaskSupervisor(timeout_grace=dt.timedelta(seconds=0.5))
    stored_run = env.store.get_run("sleeper", run.run_id)

    def run_in_child(task_id: str, **kwargs) -> tuple[float, object]:
        item = items[task_id]
        assert start_try(env.store, item.key, item.try_id, now=env.clock())
        started = time.monotonic()
        result = supervisor.run(item, store=env.store, dags_folder=str(env.dags_folder), plugins_folder=None,
                                now_fn=env.clock, log_sink=env.logs, hostname="h", run=stored_run,
                                credentials=None, **kwargs)
        return time.monotonic() - started, result

    try:
        for case in ("timeout", "heartbeat"):
            marker = tmp_path / f"{case}.pid"
            monkeypatch.setenv("MARKER", str(marker))
            lost = threading.Event()
            if case == "heartbeat":
                threading.Thread(target=lambda m=marker, e=lost: (_wait_for(m.exists), e.set()), daemon=True).start()
                elapsed, result = run_in_child(case, lost=lost)
                assert "heartbeat" in result.note
            else:
                elapsed, result = run_in_child(case, execution_timeout=dt.timedelta(seconds=1))
                assert "execution_timeout" in result.note
            assert result.state is TaskInstanceState.FAILED and elapsed < 20
            grandchild = int(marker.read_text())
            _wait_for(lambda pid=grandchild: not _alive(pid))  # the task's own subprocess went with it

        _elapsed, result = run_in_child("crash")
        assert result.state is TaskInstanceState.FAILED
        assert result.note == "the task's process ended without a result"
        log = env.log("sleeper", run.run_id, "crash")
        assert "about to vanish" in log and "ended without a result" in log
    finally:
        supervisor.close()


ESCAPER = ESCAPE + """
import os, signal, time

def leave(ending):
    escape(os.environ["MARKER"])
    if ending == "times out":
        signal.signal(signal.SIGALRM, signal.SIG_IGN)  # execution_timeout cannot stop it: the worker kills it
        time.sleep(1000)
    if ending == "exits":
        os._exit(0)  # past the child's own sweep: the task server's

def look():
    print("survivors:", survivors(os.environ["MARKER"]))

with DAG("escaper", schedule=None, start_date=START):
    for ending in ("returns", "times out", "exits"):
        PythonOperator(task_id=ending.replace(" ", "_"), python_callable=leave, op_args=[ending])
        PythonOperator(task_id=f"look_{ending.replace(' ', '_')}", python_callable=look)
"""


@pytest.mark.parametrize("ending", ["returns", "times out", "exits"])
def test_nothing_a_try_starts_outlives_it_and_the_warm_servers_next_try_finds_none_of_it(env, monkeypatch,
                                                                                         ending) -> None:
    """Issue 34: ``fork(); setsid(); fork()`` from a task left a process running minutes after the try. The process
    ignores SIGTERM and keeps forking; the try then ends normally, past its execution_timeout (killed by the
    worker) or with ``os._exit``. The next try, forked from the same warm task server at once, finds none of it,
    nor does the test."""
    env.add("escaper", ESCAPER)
    run = env.trigger("escaper")
    env.scheduler.run_pass()
    items = {i.key.task_id: i for i in env.executor.take()}
    supervisor = TaskSupervisor(timeout_grace=dt.timedelta(seconds=0.5))
    stored_run = env.store.get_run("escaper", run.run_id)
    marker = new_marker()
    monkeypatch.setenv("MARKER", marker)
    # Bounded, so that a try held open by what it left (the escaped process keeps the try's socket) fails in time.
    timeout = dt.timedelta(seconds=1 if ending == "times out" else 10)

    def run_in_child(task_id: str) -> object:
        item = items[task_id]
        assert start_try(env.store, item.key, item.try_id, now=env.clock())
        return supervisor.run(item, store=env.store, dags_folder=str(env.dags_folder), plugins_folder=None,
                              now_fn=env.clock, log_sink=env.logs, hostname="h", run=stored_run, credentials=None,
                              execution_timeout=timeout)

    task_id = ending.replace(" ", "_")
    try:
        result = run_in_child(task_id)
        assert (result.state is TaskInstanceState.SUCCESS) is (ending == "returns"), result  # type: ignore[attr-defined]
        run_in_child(f"look_{task_id}")
        assert "survivors: []" in env.log("escaper", run.run_id, f"look_{task_id}")
        assert gone_within(marker, 2.0) is not None, "a process the try started outlived it"
    finally:
        supervisor.close()
        kill_survivors(marker)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie waiting for its reaper is gone for our purposes
        return stat.read().split(")")[-1].split()[0] != "Z"


def _wait_for(condition, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.05)

