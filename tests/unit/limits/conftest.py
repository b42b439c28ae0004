from __future__ import annotations

import pytest
from moto import mock_aws

from tests.mocked_clients import mocked_client
from updraft.limits import Backoff, Table
from updraft.store.config import StoreConfig
from updraft.store.dynamo import DynamoStore
from updraft.store.tables import create_table


@pytest.fixture
def config() -> StoreConfig:
    return StoreConfig(table_name="updraft-limits-test", region="us-east-1", s3_bucket="updraft-limits-test")


@pytest.fixture
def store(config: StoreConfig) -> DynamoStore:
    with mock_aws():
        create_table(config, client=mocked_client("dynamodb"))
        yield DynamoStore(config, s3_client=mocked_client("s3"))


@pytest.fixture
def pauses() -> list[float]:
    """The conflict pauses a table's backoff took (it does not sleep in tests)."""
    return []


@pytest.fixture
def table(store: DynamoStore, config: StoreConfig, pauses) -> Table:
    return Table(mocked_client("dynamodb"), config.table_name, Backoff(sleep=pauses.append))
