"""Throttling and transient errors injected into every AWS service Updraft calls: each call is retried with
backoff until it succeeds, and a retried write lands once.

The faults are injected where moto answers (its botocore ``before-send`` stubber), so each failed attempt never
reached the service, exactly as a throttled request is refused before it is applied. Six failures in a row: more
than botocore's legacy default (4 retries) and pynamodb's (3) allow, within Updraft's 8 attempts.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import threading
import time
from unittest import mock

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from moto import mock_aws
from moto.core.botocore_stubber import BotocoreStubber, MockRawResponse

from tests.functional.scheduling.harness import make_store
from updraft.aws_clients import MAX_ATTEMPTS
from updraft.config import UpdraftConfig
from updraft.model.records import DagRun
from updraft.model.states import DagRunState

FAILURES = 6


def _json_error(code: str, status: int = 400) -> tuple[int, dict[str, str], bytes]:
    return status, {"x-amzn-ErrorType": code}, json.dumps({"__type": code, "message": "Rate exceeded"}).encode()


# What each service answers when it throttles (then a 500 for a transient failure, in turn).
THROTTLED = {
    "dynamodb": _json_error("com.amazonaws.dynamodb.v20120810#ThrottlingException"),
    "s3": (503, {}, b"<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>"),
    "lambda": _json_error("TooManyRequestsException", 429),
    "ecs": _json_error("ThrottlingException"),
    "sfn": _json_error("ThrottlingException"),
}
TRANSIENT = {"s3": (500, {}, b"<Error><Code>InternalError</Code><Message>retry</Message></Error>")}


@contextlib.contextmanager
def flaky(failures: int = FAILURES):
    """Every request fails ``failures`` times (throttled, then a 5xx, alternately) before moto answers it."""
    original = BotocoreStubber.__call__
    attempts: dict[str, int] = {}
    sleeps: list[float] = []
    caller, real_sleep = threading.current_thread(), time.sleep

    def sleep(seconds: float) -> None:
        # botocore sleeps through the time module, which other threads of this process (a server, a heartbeat
        # left by another test) also use: only this thread's sleeps are the retries' backoff.
        if threading.current_thread() is caller:
            sleeps.append(seconds)
        else:
            real_sleep(seconds)

    def call(stubber, event_name, request, **kwargs):
        if not stubber.enabled:
            return None
        _, service, operation = event_name.split(".")
        key = f"{service}.{operation}"
        attempts[key] = attempts.get(key, 0) + 1
        if attempts[key] <= failures:
            status, headers, body = (THROTTLED[service] if attempts[key] % 2 else
                                     TRANSIENT.get(service, _json_error("InternalFailure", 500)))
            return AWSResponse(request.url, status, headers, MockRawResponse(body))
        return original(stubber, event_name, request, **kwargs)

    with (mock.patch.object(BotocoreStubber, "__call__", call),
          mock.patch("botocore.endpoint.time.sleep", sleep)):
        yield attempts, sleeps


def _client(service: str):
    # The clients Updraft builds (services.Services.client, the secrets backends) take these arguments.
    return boto3.client(service, **UpdraftConfig(region="us-east-1").client_kwargs())


@pytest.fixture(scope="module")
def aws():
    with mock_aws():
        yield


CALLS = {
    "s3": lambda: (_client("s3").create_bucket(Bucket="updraft-chaos"),
               _client("s3").put_object(Bucket="updraft-chaos", Key="k", Body=b"1")),
    "lambda": lambda: _client("lambda").list_functions(),
    "ecs": lambda: _client("ecs").create_cluster(clusterName="c"),
    "sfn": lambda: _client("stepfunctions").list_state_machines(),
}


@pytest.mark.parametrize("service", sorted(CALLS))
def test_each_services_calls_are_retried_with_backoff(aws, service):
    with flaky() as (attempts, sleeps):
        CALLS[service]()
    assert set(attempts.values()) == {FAILURES + 1}  # every call: its failures, then the one that landed
    assert len(sleeps) == FAILURES * len(attempts) and all(s >= 0 for s in sleeps)
    assert FAILURES < MAX_ATTEMPTS


def test_the_stores_conditional_writes_are_retried_and_land_once(aws):
    store = make_store("updraft-throttled")
    run = DagRun(dag_id="d", run_id="r", run_type="manual", dag_hash="h", state=DagRunState.QUEUED,
                 queued_at=dt.datetime(2024, 1, 1, tzinfo=dt.UTC))
    with flaky() as (attempts, _):
        assert store.create_run(run)
        assert store.set_run_state("d", "r", expected=[DagRunState.QUEUED], state=DagRunState.RUNNING,
                                   now=dt.datetime(2024, 1, 2, tzinfo=dt.UTC))
        assert not store.create_run(run)  # the run exists: a lost race, still told apart from a throttle
    assert attempts["dynamodb.PutItem"] == FAILURES + 2  # the first create's failures, its landing, the refusal
    assert store.get_run("d", "r").state == DagRunState.RUNNING
    assert len(store.list_runs("d")) == 1
