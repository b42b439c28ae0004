from __future__ import annotations

import threading

import boto3
import pytest
from moto import mock_aws
from moto.core import botocore_stubber

from tests.mocked_clients import mocked_client
from updraft.store.config import StoreConfig
from updraft.store.dynamo import DynamoStore
from updraft.store.tables import create_table

BUCKET = "updraft-store-test"


@pytest.fixture(scope="session")
def boto_session() -> boto3.session.Session:
    # One session for the run: each new one re-reads botocore's endpoint and service JSON (~0.2 s a client).
    return boto3.session.Session(region_name="us-east-1")


@pytest.fixture
def config() -> StoreConfig:
    return StoreConfig(table_name="updraft-test", region="us-east-1", s3_bucket=BUCKET)


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    with mock_aws():
        yield


@pytest.fixture
def s3(aws):
    client = mocked_client("s3")
    client.create_bucket(Bucket=BUCKET)
    return client


@pytest.fixture
def store(aws, s3, config: StoreConfig) -> DynamoStore:
    create_table(config, client=mocked_client("dynamodb"))
    return DynamoStore(config, s3_client=s3)


@pytest.fixture
def serialized_moto(monkeypatch: pytest.MonkeyPatch):
    """One request into moto at a time (aws-offline.md 2a): moto's check-then-write is not atomic across
    threads, real DynamoDB's is. The store's own code still runs fully concurrently."""
    lock = threading.RLock()
    original = botocore_stubber.BotocoreStubber.__call__

    def locked(self, *args, **kwargs):
        with lock:
            return original(self, *args, **kwargs)

    monkeypatch.setattr(botocore_stubber.BotocoreStubber, "__call__", locked)

