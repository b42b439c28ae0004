"""Every botocore client of Updraft sends the fixed user agent (``updraft.aws_clients``; what a session adds
follows it), the store's DynamoDB client included, whichever thread sends its first request; and keeps Updraft's
retries."""

from __future__ import annotations

import threading
from typing import Any

import boto3
from moto import mock_aws

from tests.functional.scheduling.harness import make_store
from updraft.aws_clients import MAX_ATTEMPTS, USER_AGENT
from updraft.config import UpdraftConfig


def _sent_agents(client: Any) -> list[str]:
    agents: list[str] = []

    def record(request: Any, **_: Any) -> None:
        agents.append(request.headers["User-Agent"].decode() if isinstance(request.headers["User-Agent"], bytes)
                      else request.headers["User-Agent"])

    client.meta.events.register_first("before-send.*.*", record)
    return agents


def test_a_boto3_client_built_with_updrafts_config_sends_the_fixed_agent_and_keeps_its_retries() -> None:
    with mock_aws():
        s3 = boto3.client("s3", **UpdraftConfig(region="us-east-1").client_kwargs())
        agents = _sent_agents(s3)
        s3.create_bucket(Bucket="updraft-agents")
        s3.list_objects_v2(Bucket="updraft-agents")
    assert len(agents) == 2 and all(agent.startswith(USER_AGENT) for agent in agents)  # and the session's extra
    assert USER_AGENT.startswith("updraft/") and " botocore/" in USER_AGENT
    assert s3.meta.config.retries["total_max_attempts"] == MAX_ATTEMPTS


def test_the_stores_dynamodb_client_sends_the_fixed_agent_when_another_thread_builds_it() -> None:
    with mock_aws():
        store = make_store()
        connection = store.models.dag_meta._get_connection().connection
        built: list[Any] = []
        thread = threading.Thread(target=lambda: built.append(connection.client))  # pynamodb builds it lazily
        thread.start()
        thread.join()
        agents = _sent_agents(built[0])
        store.list_dags()
        store.get_pool("default_pool")
    assert agents and all(agent.startswith(USER_AGENT) for agent in agents)
    assert connection.client is built[0]  # one client for every thread
    assert built[0].meta.config.retries["total_max_attempts"] == MAX_ATTEMPTS
