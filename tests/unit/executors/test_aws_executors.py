"""The Lambda, Fargate and routing executors against moto (Lambda invoke echoes; ECS records run_task)."""

from __future__ import annotations

import io
import json
import zipfile

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from tests.functional.ecs_helpers import fargate_cluster
from updraft.executors.base import Dispatch
from updraft.executors.fargate import DISPATCH_ENV, FargateExecutor
from updraft.executors.lambda_ import LambdaExecutor
from updraft.executors.recording import RecordingExecutor
from updraft.executors.routing import RoutingExecutor
from updraft.model.records import TIKey

REGION = "us-east-1"
LAMBDA_DISPATCH = Dispatch(TIKey("etl", "manual__2024-01-01T00:00:00+00:00", "extract"), 1, "a" * 32)
FARGATE_DISPATCH = Dispatch(TIKey("etl", "manual__2024-01-01T00:00:00+00:00", "train", 3), 2, "b" * 32,
                            executor="fargate", compute={"executor": "fargate", "cpu": 1024, "memory": 4096})


def _zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("handler.py", "def handler(event, context):\n    return event\n")
    return buffer.getvalue()


@pytest.fixture
def aws():
    with mock_aws(config={"lambda": {"use_docker": False}}):
        yield


@pytest.fixture
def worker_function(aws):
    iam = boto3.client("iam", region_name=REGION)
    role = iam.create_role(RoleName="worker", AssumeRolePolicyDocument=json.dumps({"Version": "2012-10-17",
                                                                                   "Statement": []}))["Role"]
    client = boto3.client("lambda", region_name=REGION)
    client.create_function(FunctionName="updraft-worker", Runtime="python3.12", Role=role["Arn"],
                           Handler="handler.handler", Code={"ZipFile": _zip()})
    return client


@pytest.fixture
def cluster(aws):
    return fargate_cluster(REGION)


class SpyLambda:
    """Records what was sent, forwarding to moto so the call is also validated against the API model."""

    def __init__(self, client):
        self.client = client
        self.calls = []

    def invoke(self, **kwargs):
        self.calls.append(kwargs)
        return self.client.invoke(**kwargs)


def test_lambda_executor_invokes_asynchronously_with_the_payload_only(worker_function):
    spy = SpyLambda(worker_function)
    executor = LambdaExecutor(spy, "updraft-worker")
    executor.dispatch([LAMBDA_DISPATCH])
    (call,) = spy.calls
    assert call["FunctionName"] == "updraft-worker" and call["InvocationType"] == "Event"
    assert json.loads(call["Payload"]) == LAMBDA_DISPATCH.to_payload()
    assert list(executor.failed) == [] and executor.failures == 0


class ThrottledLambda:
    """moto accepts an async invoke of a missing function, so refusal is played by a stub."""

    def invoke(self, **kwargs):
        raise ClientError({"Error": {"Code": "TooManyRequestsException", "Message": "Rate exceeded"}}, "Invoke")


def test_lambda_executor_logs_a_refused_invoke_and_keeps_going(caplog):
    executor = LambdaExecutor(ThrottledLambda(), "updraft-worker")
    executor.dispatch([LAMBDA_DISPATCH, FARGATE_DISPATCH])
    assert list(executor.failed) == [LAMBDA_DISPATCH, FARGATE_DISPATCH] and executor.failures == 2
    assert "queued timeout will retry it" in caplog.text


def test_payload_round_trips_and_bad_payloads_name_the_field():
    assert Dispatch.from_payload(json.loads(json.dumps(FARGATE_DISPATCH.to_payload()))) == FARGATE_DISPATCH
    with pytest.raises(ValueError, match="'try_id'"):
        Dispatch.from_payload({**LAMBDA_DISPATCH.to_payload(), "try_id": None})
    with pytest.raises(ValueError, match="'try_number'"):
        Dispatch.from_payload({**LAMBDA_DISPATCH.to_payload(), "try_number": "1"})
    with pytest.raises(ValueError, match="JSON object"):
        Dispatch.from_payload(["etl"])


def _fargate(cluster, **kwargs) -> FargateExecutor:
    ecs, subnet, group = cluster
    return FargateExecutor(ecs, "updraft", "updraft-worker", [subnet], [group], "worker", **kwargs)


def test_fargate_executor_runs_a_task_sized_and_tagged_for_the_try(cluster):
    executor = _fargate(cluster, environment={"UPDRAFT_TABLE": "t"})
    executor.dispatch([FARGATE_DISPATCH])
    assert list(executor.failed) == [] and executor.failures == 0
    arn = executor.task_arns[FARGATE_DISPATCH.try_id]
    (task,) = cluster[0].describe_tasks(cluster="updraft", tasks=[arn], include=["TAGS"])["tasks"]
    assert task["launchType"] == "FARGATE"
    (override,) = task["overrides"]["containerOverrides"]
    assert override["name"] == "worker"
    assert override["command"] == ["python", "-m", "functions.worker.handler"]
    env = {e["name"]: e["value"] for e in override["environment"]}
    assert json.loads(env[DISPATCH_ENV]) == FARGATE_DISPATCH.to_payload()
    assert env["UPDRAFT_TABLE"] == "t"
    tags = {t["key"]: t["value"] for t in task.get("tags", [])}
    assert tags["updraft:task_id"] == "train" and tags["updraft:try_number"] == "2"


def test_fargate_request_carries_sizes_network_and_idempotency_token(cluster):
    _, subnet, group = cluster
    request = _fargate(cluster, assign_public_ip=True).run_task_request(FARGATE_DISPATCH)
    assert request["launchType"] == "FARGATE" and request["clientToken"] == FARGATE_DISPATCH.try_id
    assert request["overrides"]["cpu"] == "1024" and request["overrides"]["memory"] == "4096"
    assert request["networkConfiguration"]["awsvpcConfiguration"] == {
        "subnets": [subnet], "securityGroups": [group], "assignPublicIp": "ENABLED"}
    tags = {t["key"]: t["value"] for t in request["tags"]}
    assert tags["updraft:run_id"] == "manual__2024-01-01T00:00:00+00:00" and tags["updraft:map_index"] == "3"
    # Without sizes the task definition's apply.
    plain = _fargate(cluster).run_task_request(LAMBDA_DISPATCH)
    assert "cpu" not in plain["overrides"] and "memory" not in plain["overrides"]
    assert plain["networkConfiguration"]["awsvpcConfiguration"]["securityGroups"] == [group]


def test_fargate_executor_logs_a_refused_run_task(cluster, caplog):
    ecs, subnet, _ = cluster
    executor = FargateExecutor(ecs, "no-such-cluster", "updraft-worker", [subnet], [], "worker")
    executor.dispatch([FARGATE_DISPATCH])
    assert list(executor.failed) == [FARGATE_DISPATCH] and executor.failures == 1


def test_routing_sends_each_dispatch_to_its_tasks_executor(caplog):
    lam, far = RecordingExecutor(), RecordingExecutor()
    router = RoutingExecutor({"lambda": lam, "fargate": far})
    router.dispatch([LAMBDA_DISPATCH, FARGATE_DISPATCH])
    assert lam.take() == [LAMBDA_DISPATCH] and far.take() == [FARGATE_DISPATCH]

    lambda_only = RoutingExecutor({"lambda": lam})
    lambda_only.dispatch([FARGATE_DISPATCH, LAMBDA_DISPATCH])
    assert lam.take() == [LAMBDA_DISPATCH]
    assert list(lambda_only.undeliverable) == [FARGATE_DISPATCH] and lambda_only.failures == 1
    assert "no 'fargate' executor" in caplog.text
