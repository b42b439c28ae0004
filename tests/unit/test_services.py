"""Services: what a handler builds on first use, from one UpdraftConfig."""

from __future__ import annotations

import pytest
from moto import mock_aws

from updraft.config import ConfigError, UpdraftConfig
from updraft.executors.fargate import FargateExecutor
from updraft.executors.lambda_ import LambdaExecutor
from updraft.model.records import TIKey
from updraft.runtime.logs import CloudWatchLogSink, S3LogSink
from updraft.scheduling import INVOKE_CONCURRENCY
from updraft.services import Services

BASE = {"UPDRAFT_TABLE": "t", "AWS_REGION": "us-east-1", "UPDRAFT_WORKER_FUNCTION": "worker"}


def _services(**env: str) -> Services:
    return Services(UpdraftConfig.from_env({**BASE, **env}))


def test_nothing_is_built_until_asked():
    services = _services()
    assert services._clients == {}
    assert "store" not in vars(services) and "scheduler" not in vars(services)


@mock_aws
def test_lambda_only_without_a_cluster():
    services = _services()
    assert set(services.executor.executors) == {"lambda"}
    assert services.scheduler.executor is services.executor
    assert services.scheduler.store is services.store
    assert services.client("lambda") is services.client("lambda")  # one client per service, reused


@mock_aws
def test_a_scheduler_shares_wide_claims_through_the_scheduler_function_but_in_local_mode():
    """Deployed, a pass asks scheduler invocations for shares of a wide claim (an async invoke naming the share);
    without a scheduler function, or in local mode (one embedded AWS interpreter), it claims alone."""
    import json

    from updraft.scheduling import Share

    assert _services().scheduler.claims.ask_share is None
    assert _services(UPDRAFT_SCHEDULER_FUNCTION="sched", UPDRAFT_LOCAL_COMPUTE="127.0.0.1:1").scheduler.claims \
        .ask_share is None
    services = _services(UPDRAFT_SCHEDULER_FUNCTION="sched")
    sent: list[dict] = []
    services._clients["lambda"] = type("Spy", (), {"invoke": lambda self, **kw: sent.append(kw)})()
    ask = services.scheduler.claims.ask_share
    assert ask is not None
    ask("d", "r", Share(2, 4))
    (call,) = sent
    assert (call["FunctionName"], call["InvocationType"]) == ("sched", "Event")
    assert json.loads(call["Payload"])["detail"] == {"dag_id": "d", "run_id": "r", "share": [2, 4]}


@mock_aws
def test_the_invoke_clients_hold_a_connection_per_invoke_a_pass_sends_at_once():
    services = _services(UPDRAFT_ECS_CLUSTER="c", UPDRAFT_ECS_TASK_DEFINITION="td", UPDRAFT_ECS_SUBNETS="s-1")
    for service in ("lambda", "ecs"):
        assert services.client(service).meta.config.max_pool_connections == INVOKE_CONCURRENCY == 32
    assert services.client("s3").meta.config.max_pool_connections == 10  # botocore's default elsewhere


@mock_aws
def test_fargate_when_a_cluster_is_configured():
    services = _services(UPDRAFT_ECS_CLUSTER="c", UPDRAFT_ECS_TASK_DEFINITION="td", UPDRAFT_ECS_SUBNETS="s-1",
                         UPDRAFT_BUCKET="b")
    lam, fargate = services.executor.executors["lambda"], services.executor.executors["fargate"]
    assert isinstance(lam, LambdaExecutor) and lam.function_name == "worker"
    assert isinstance(fargate, FargateExecutor) and fargate.security_groups == []
    # The Fargate worker gets the same configuration, so its mini scheduler can dispatch too.
    assert UpdraftConfig.from_env(fargate.environment) == services.config
    assert isinstance(services.log_sink, S3LogSink) and services.log_sink.bucket == "b"


def test_missing_settings_name_the_variable():
    with pytest.raises(ConfigError, match="UPDRAFT_WORKER_FUNCTION"):
        _ = Services(UpdraftConfig.from_env({"UPDRAFT_TABLE": "t", "AWS_REGION": "us-east-1"})).executor
    with pytest.raises(ConfigError, match="UPDRAFT_BUCKET"):
        _ = _services().loader
    assert _services().log_sink is None  # no bucket: tries still run, without stored logs


@mock_aws
def test_task_logs_go_to_cloudwatch_when_a_task_log_group_is_set():
    services = _services(UPDRAFT_BUCKET="b", UPDRAFT_TASK_LOG_GROUP="updraft-dev-task-logs")
    sink = services.log_sink
    assert isinstance(sink, CloudWatchLogSink) and sink.log_group == "updraft-dev-task-logs"
    assert sink.logs_client is services.client("logs")  # the Services' own client (its region, its endpoint)
    assert services.log_sink is sink
    # Written where the sink says, readable back through the same Services.
    services.client("logs").create_log_group(logGroupName="updraft-dev-task-logs")
    key = TIKey("d", "manual__2024-01-01T00:00:00+00:00", "t")
    sink.write(key, 1, "hello\n")
    assert services.log_sink.read(key, 1) == "hello\n"
    assert _services(UPDRAFT_BUCKET="b").log_sink.__class__ is S3LogSink  # unset: the bucket, as before
