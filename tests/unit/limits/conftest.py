from __future__ import annotations

import boto3
import pytest
from moto import mock_aws

from updraft.limits import Backoff, Table
from updraft.store.config import StoreConfig
from updraft.store.dynamo import DynamoStore
from updraft.store.tables import create_table


@pytest.fixture(scope="session")
def boto_session() -> boto3.session.Session:
    return boto3.session.Session(region_name="us-east-1")


@pytest.fixture
def config() -> StoreConfig:
    return StoreConfig(table_name="updraft-limits-test", region="us-east-1", s3_bucket="updraft-limits-test")


@pytest.fixture
def store(config: StoreConfig, boto_session) -> DynamoStore:
    with mock_aws():
        create_table(config, client=boto_session.client("dynamodb"))
        yield DynamoStore(config, s3_client=boto_session.client("s3"))


@pytest.fixture
def pauses() -> list[float]:
    """The conflict pauses a table's backoff took (it does not sleep in tests)."""
    return []


@pytest.fixture
def table(store: DynamoStore, config: StoreConfig, boto_session, pauses) -> Table:
    return Table(boto_session.client("dynamodb"), config.table_name, Backoff(sleep=pauses.append))
