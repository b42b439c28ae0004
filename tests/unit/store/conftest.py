from __future__ import annotations

import boto3
import pytest
from moto import mock_aws

from updraft.store.config import StoreConfig
from updraft.store.dynamo import DynamoStore
from updraft.store.tables import create_table

BUCKET = "updraft-store-test"


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
    client = boto3.client("s3", region_name="us-east-1")
    client.create_bucket(Bucket=BUCKET)
    return client


@pytest.fixture
def store(aws, s3, config: StoreConfig) -> DynamoStore:
    create_table(config)
    return DynamoStore(config, s3_client=s3)
