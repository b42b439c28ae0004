"""The worker Lambda handler, invoked with the sample dispatch against moto (DynamoDB, S3, Lambda)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from botocore.client import BaseClient

from tests.functional.lambda_helpers import WORKER, claimed_dispatch, lambda_context, spied_services, worker_account
from updraft.executors.base import Dispatch
from updraft.model.records import TIKey
from updraft.model.states import TaskInstanceState

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = json.loads((ROOT / "events" / "worker" / "dispatch.json").read_text())
TABLE = "updraft-worker-test"
BUCKET = "updraft-dev-123456789012-us-east-1"

DAG_FILE = '''
import datetime
from airflow.sdk import DAG
from airflow.providers.standard.operators.bash import BashOperator

with DAG("handler_chain", schedule=None, start_date=datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)):
    BashOperator(task_id="first", bash_command="echo hello from first") >> BashOperator(
        task_id="second", bash_command="echo 2")
'''






@pytest.fixture
def env(tmp_path, monkeypatch):
    with worker_account(tmp_path, monkeypatch, table=TABLE, bucket=BUCKET, dag_id="handler_chain",
                        dag_file=DAG_FILE) as account:
        dispatch = claimed_dispatch(account.store, "handler_chain", run_id=SAMPLE["run_id"])
        from functions.worker import handler

        invokes = spied_services(handler, monkeypatch, account.lam)
        yield SimpleNamespace(handler=handler, store=account.store, s3=account.s3, dispatch=dispatch, invokes=invokes)


@pytest.mark.slow
def test_dispatch_runs_the_try_logs_it_and_starts_the_next_task(env):
    event = {**SAMPLE, "try_id": env.dispatch.try_id}  # the sample, with the fencing token of the real claim
    assert event == env.dispatch.to_payload()

    result = env.handler.handler(event, lambda_context(WORKER))

    assert result == {"status": "ran", "task": "first", "try_number": 1, "state": "success"}
    key = TIKey("handler_chain", SAMPLE["run_id"], "first")
    assert env.store.get_ti(key).state == TaskInstanceState.SUCCESS
    log = env.s3.get_object(Bucket=BUCKET, Key=f"logs/handler_chain/{SAMPLE['run_id']}/first/-1/1.log")
    assert "hello from first" in log["Body"].read().decode()
    (downstream,) = env.invokes  # the mini scheduler dispatched "second" through the worker Lambda
    assert downstream["task_id"] == "second"
    second = env.store.get_ti(TIKey("handler_chain", SAMPLE["run_id"], "second"))
    assert second.state == TaskInstanceState.QUEUED and second.try_id == downstream["try_id"]

    # Lambda delivered the same event again: the fence refuses it and nothing changes.
    before = env.store.get_run_tis("handler_chain", SAMPLE["run_id"])
    again = env.handler.handler(event, lambda_context(WORKER))
    assert again == {"status": "not_runnable", "task": "first", "try_number": 1}
    assert env.store.get_run_tis("handler_chain", SAMPLE["run_id"]) == before
    assert len(env.invokes) == 1


def test_the_next_dispatch_carries_its_run_and_its_worker_does_not_read_it(env, monkeypatch):
    env.handler.handler({**SAMPLE, "try_id": env.dispatch.try_id}, lambda_context(WORKER))
    (downstream,) = env.invokes
    run = env.store.get_run("handler_chain", SAMPLE["run_id"])
    assert Dispatch.from_payload(downstream).run == run  # the mini scheduler's read, sent with the dispatch
    reads = []
    original = BaseClient._make_api_call

    def call(client, operation, params):
        if operation == "GetItem" and params["Key"]["sk"]["S"].startswith("RUN#"):
            reads.append(params["Key"])
        return original(client, operation, params)

    monkeypatch.setattr(BaseClient, "_make_api_call", call)
    result = env.handler.handler(downstream, lambda_context(WORKER))
    assert result == {"status": "ran", "task": "second", "try_number": 1, "state": "success"}
    assert reads == []


def test_a_superseded_try_is_not_run(env):
    result = env.handler.handler(SAMPLE, lambda_context(WORKER))  # the sample's own try_id is not the claimed one
    assert result["status"] == "not_runnable"
    assert env.store.get_ti(TIKey("handler_chain", SAMPLE["run_id"], "first")).state == TaskInstanceState.QUEUED


@pytest.mark.slow
@pytest.mark.parametrize("event", [{}, {"Records": []}, {**SAMPLE, "try_number": "one"}, "first", None])
def test_malformed_payload_is_rejected_without_raising(env, event, caplog):
    result = env.handler.handler(event, lambda_context(WORKER))
    assert result["status"] == "rejected" and result["error"].startswith("not a worker dispatch")
    assert "rejected a malformed dispatch" in caplog.text
    assert env.store.get_ti(TIKey("handler_chain", SAMPLE["run_id"], "first")).state == TaskInstanceState.QUEUED


def test_fargate_entrypoint_reads_the_dispatch_from_the_environment(env, monkeypatch, capsys):
    monkeypatch.setenv("UPDRAFT_DISPATCH", json.dumps(env.dispatch.to_payload()))
    assert env.handler.main() == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["state"] == "success"
    monkeypatch.setenv("UPDRAFT_DISPATCH", "not json")
    assert env.handler.main() == 2


def test_warm_up_takes_the_credentials_and_starts_the_task_server_a_first_try_would(tmp_path, monkeypatch):
    """``handler.warm_up`` (what local mode's worker processes run when they start) assumes the DAG-code role,
    mirrors the DAG files and starts the task server; the first try then uses them: no AssumeRole of its own, the
    same task server."""
    from updraft.runtime.supervisor import shared_supervisor

    role = {"UPDRAFT_DAG_CODE_ROLE": "arn:aws:iam::123456789012:role/updraft-dag-code"}
    with worker_account(tmp_path, monkeypatch, table=TABLE, bucket=BUCKET, dag_id="handler_chain",
                        dag_file=DAG_FILE, env=role) as account:
        dispatch = claimed_dispatch(account.store, "handler_chain", run_id=SAMPLE["run_id"])
        from functions.worker import handler

        spied_services(handler, monkeypatch, account.lam)
        supervisor = shared_supervisor()
        supervisor.close()  # as in a new container: no task server yet
        handler.warm_up()
        credentials = handler.services().dag_code_credentials
        assert credentials is not None and credentials.assumed == 1
        server = supervisor._proc
        assert server is not None and server.poll() is None
        mirrored = sorted(p.name for p in Path(handler.services().loader.dags_folder).glob("*.py"))
        assert mirrored and all(name.endswith(".py") for name in mirrored)  # the bucket's DAG files, already here

        result = handler.handler(dispatch.to_payload(), lambda_context(WORKER))
        assert result["state"] == "success"
        assert credentials.assumed == 1 and supervisor._proc is server


MINUTELY_FILE = '''
import datetime
from airflow.sdk import DAG
from airflow.providers.standard.operators.bash import BashOperator

with DAG("handler_minutely", schedule="* * * * *",
         start_date=datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc), catchup=False):
    BashOperator(task_id="work", bash_command="echo on the minute")
'''


def test_a_run_due_wake_creates_the_run_starts_it_and_dispatches_its_first_task(tmp_path, monkeypatch):
    """The deferral state machine's wake at a scheduled run's due moment (``events/worker/run_due.json``):
    delivered twice, the run is created and started once and its first task dispatched once."""
    event = json.loads((ROOT / "events" / "worker" / "run_due.json").read_text())
    with worker_account(tmp_path, monkeypatch, table=TABLE, bucket=BUCKET, dag_id="handler_minutely",
                        dag_file=MINUTELY_FILE) as account:
        from functions.worker import handler

        invokes = spied_services(handler, monkeypatch, account.lam)
        result = handler.handler(event, lambda_context(WORKER))
        (run_id,) = result["runs_created"]
        assert result == {"status": "runs_created", "dag_id": "handler_minutely", "runs_created": [run_id]}
        run = account.store.get_run("handler_minutely", run_id)
        assert run.run_type == "scheduled" and run.state == "running"
        (first,) = invokes
        assert (first["run_id"], first["task_id"]) == (run_id, "work")

        again = handler.handler(event, lambda_context(WORKER))  # Lambda's at-least-once delivery
        assert again["status"] == "runs_created" and run_id not in again["runs_created"]
        assert [invoke for invoke in invokes if invoke["run_id"] == run_id] == [first]
