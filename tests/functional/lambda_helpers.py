"""What the handler tests share: a Lambda context, a do-nothing worker function for moto, a spy on invokes, and the
moto account a worker handler test runs in (its DAG file uploaded and parsed into the store)."""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import tempfile
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import boto3
import pytest
from moto import mock_aws

REGION = "us-east-1"
WORKER = "updraft-worker"


def lambda_context(function_name: str) -> SimpleNamespace:
    """The attributes Powertools' inject_lambda_context reads."""
    return SimpleNamespace(function_name=function_name, memory_limit_in_mb=1024, aws_request_id="req-1",
                           invoked_function_arn=f"arn:aws:lambda:us-east-1:123456789012:function:{function_name}")


def echo_function_zip() -> bytes:
    """moto cannot run Lambda code without Docker; it only needs a function to exist to accept invokes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("handler.py", "def handler(event, context):\n    return event\n")
    return buffer.getvalue()


def worker_function(region: str = REGION, name: str = WORKER) -> Any:
    """The worker Lambda function on moto (inside ``mock_aws``), with its role: the Lambda client."""
    role = boto3.client("iam", region_name=region).create_role(
        RoleName="worker", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    lam = boto3.client("lambda", region_name=region)
    lam.create_function(FunctionName=name, Runtime="python3.12", Role=role, Handler="handler.handler",
                        Code={"ZipFile": echo_function_zip()})
    return lam


class SpyLambda:
    """Forwards to moto (which only echoes) and keeps the payloads the executor sent."""

    def __init__(self, client, function_name: str | None = None) -> None:
        self.client = client
        self.function_name = function_name
        self.payloads: list[dict] = []

    def invoke(self, **kwargs):
        if self.function_name is not None:
            assert kwargs["FunctionName"] == self.function_name and kwargs["InvocationType"] == "Event"
        self.payloads.append(json.loads(kwargs["Payload"]))
        return self.client.invoke(**kwargs)


def spied_services(handler: Any, monkeypatch: pytest.MonkeyPatch, lam: Any,
                   function_name: str | None = None) -> list[dict]:
    """``handler``'s services built afresh from the environment, their Lambda client spied on: the payloads."""
    monkeypatch.setattr("updraft.services._shared", None)  # built from the test's environment on first use
    spy = SpyLambda(lam, function_name)
    handler.services()._clients["lambda"] = spy
    return spy.payloads


@contextlib.contextmanager
def worker_account(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, table: str, bucket: str, dag_id: str,
                   dag_file: str, env: Mapping[str, str] | None = None) -> Iterator[SimpleNamespace]:
    """A moto account for the worker handler: its environment (plus ``env``), the table, the bucket holding the DAG
    file ``dag_id``.py, the worker function, and the file parsed into the store as the parser would have."""
    from tests.functional.scheduling.harness import store_dags
    from updraft.runtime.loader import LocalDagLoader
    from updraft.store.config import StoreConfig
    from updraft.store.dynamo import DynamoStore
    from updraft.store.tables import create_table

    for name, value in {"AWS_REGION": REGION, "UPDRAFT_TABLE": table, "UPDRAFT_BUCKET": bucket,
                        "UPDRAFT_WORKER_FUNCTION": WORKER, **(env or {})}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the worker mirrors the DAGs under /tmp
    with mock_aws(config={"lambda": {"use_docker": False}}):
        config = StoreConfig(table_name=table, region=REGION, s3_bucket=bucket)
        create_table(config)
        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket=bucket)
        s3.put_object(Bucket=bucket, Key=f"dags/{dag_id}.py", Body=dag_file.encode())
        lam = worker_function()
        store = DynamoStore(config, s3_client=s3)
        parsed = tmp_path / "parsed"
        parsed.mkdir()
        (parsed / f"{dag_id}.py").write_text(dag_file)
        store_dags(store, LocalDagLoader(parsed).load_file(f"{dag_id}.py")[dag_id], now=dt.datetime.now(dt.UTC))
        yield SimpleNamespace(store=store, s3=s3, lam=lam)


def claimed_dispatch(store: Any, dag_id: str, task_id: str | None = None, *, run_id: str | None = None) -> Any:
    """A new run of ``dag_id`` with its first tasks claimed, as the scheduler would send them: the dispatch of
    ``task_id`` (or the only one)."""
    from updraft.executors.recording import RecordingExecutor
    from updraft.scheduling.commands.triggering import trigger_dag
    from updraft.scheduling.scheduler import Scheduler

    run = trigger_dag(store, dag_id, now=dt.datetime.now(dt.UTC), run_id=run_id)
    recording = RecordingExecutor()
    Scheduler(store, recording).schedule_run(dag_id, run.run_id)
    dispatches = recording.take()
    if task_id is None:
        (dispatch,) = dispatches
        return dispatch
    return next(d for d in dispatches if d.key.task_id == task_id)
