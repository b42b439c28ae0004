"""The task and asset state stores on DynamoDB: one partition per task instance (every try shares it, each map
index and run has its own), retention by DynamoDB TTL plus an exact read-side expiry, asset state across runs."""

from __future__ import annotations

import datetime as dt

import pytest

from updraft.model.records import TIKey
from updraft.store.config import StoreConfig
from updraft.store.dynamo import DynamoStore
from updraft.store.keys import task_state_pk
from updraft.store.state_stores import state_model
from updraft.store.tables import TTL_ATTRIBUTE

NOW = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
TI = TIKey("etl", "manual__1", "load", -1)


def test_every_try_of_an_instance_shares_its_keys_and_each_map_index_and_run_has_its_own(store: DynamoStore) -> None:
    store.set_task_state(TI, "job_id", "job-1", expires_at=None, now=NOW)
    store.set_task_state(TIKey("etl", "manual__1", "load", 0), "job_id", "job-mapped-0", expires_at=None, now=NOW)
    store.set_task_state(TIKey("etl", "manual__1", "load", 1), "job_id", "job-mapped-1", expires_at=None, now=NOW)

    entry = store.get_task_state(TI, "job_id", now=NOW)  # the retry's read: same task instance, same keys
    assert entry is not None and entry.value == "job-1" and entry.expires_at is None
    assert store.get_task_state(TIKey("etl", "manual__1", "load", 0), "job_id", now=NOW).value == "job-mapped-0"
    assert store.get_task_state(TIKey("etl", "manual__1", "load", 1), "job_id", now=NOW).value == "job-mapped-1"
    assert store.get_task_state(TIKey("etl", "manual__2", "load", -1), "job_id", now=NOW) is None  # a new run
    assert store.get_task_state(TIKey("etl", "manual__1", "other", -1), "job_id", now=NOW) is None


def test_a_key_reads_as_absent_once_expired_and_carries_the_ttl_attribute(store: DynamoStore,
                                                                           boto_session) -> None:
    expiry = NOW + dt.timedelta(hours=6)
    store.set_task_state(TI, "status", {"phase": "running"}, expires_at=expiry, now=NOW)
    store.set_task_state(TI, "job_id", "job-1", expires_at=None, now=NOW)

    assert store.get_task_state(TI, "status", now=expiry - dt.timedelta(seconds=1)).value == {"phase": "running"}
    # DynamoDB's TTL deletes in the background, days late at worst: the read checks expiry itself.
    assert store.get_task_state(TI, "status", now=expiry) is None
    assert [e.key for e in store.list_task_state(TI, now=expiry)] == ["job_id"]

    raw = boto_session.client("dynamodb").get_item(TableName=store.config.table_name,
                                                   Key={"pk": {"S": task_state_pk(TI)}, "sk": {"S": "KEY#status"}})
    assert int(raw["Item"][TTL_ATTRIBUTE]["N"]) >= int(expiry.timestamp())
    never = state_model(store.config).get(task_state_pk(TI), "KEY#job_id")
    assert never.expires is None  # NEVER_EXPIRE: no TTL attribute, so DynamoDB never deletes it
    ttl = boto_session.client("dynamodb").describe_time_to_live(TableName=store.config.table_name)
    assert ttl["TimeToLiveDescription"] == {"TimeToLiveStatus": "ENABLED", "AttributeName": TTL_ATTRIBUTE}


def test_delete_and_clear_touch_only_the_instance_and_a_missing_key_is_no_error(store: DynamoStore) -> None:
    other = TIKey("etl", "manual__1", "load", 0)
    for key in ("a", "b", "c"):
        store.set_task_state(TI, key, key.upper(), expires_at=None, now=NOW)
    store.set_task_state(other, "a", "kept", expires_at=None, now=NOW)

    store.delete_task_state(TI, "a")
    store.delete_task_state(TI, "never-set")
    assert [e.key for e in store.list_task_state(TI, now=NOW)] == ["b", "c"]
    assert store.clear_task_state(TI) == 2
    assert store.list_task_state(TI, now=NOW) == []
    assert store.get_task_state(other, "a", now=NOW).value == "kept"


def test_asset_state_outlives_runs_and_records_its_last_writer(store: DynamoStore) -> None:
    first, second = TIKey("producer", "manual__1", "load", -1), TIKey("producer", "manual__2", "load", -1)
    store.set_asset_state("orders/daily", "watermark", "2026-01-01", now=NOW, writer=first)
    store.set_asset_state("orders/daily", "total_runs", 1, now=NOW, writer=first)
    later = NOW + dt.timedelta(days=400)  # asset state never expires
    store.set_asset_state("orders/daily", "total_runs", store.get_asset_state("orders/daily", "total_runs").value + 1,
                          now=later, writer=second)

    entry = store.get_asset_state("orders/daily", "total_runs")
    assert (entry.value, entry.updated_at) == (2, later)
    assert entry.last_updated_by == {"kind": "task", "dag_id": "producer", "run_id": "manual__2", "task_id": "load",
                                     "map_index": -1}
    assert store.get_asset_state("orders/daily", "watermark").value == "2026-01-01"
    assert store.get_asset_state("other", "watermark") is None
    assert store.clear_asset_state("orders/daily") == 2
    assert store.list_asset_state("orders/daily") == []


def test_none_is_refused_as_a_value(store: DynamoStore) -> None:
    with pytest.raises(ValueError, match="Cannot set value as None"):
        store.set_task_state(TI, "k", None, expires_at=None, now=NOW)


@pytest.fixture
def small_items(config: StoreConfig) -> StoreConfig:
    return StoreConfig(table_name=config.table_name, region=config.region, s3_bucket=config.s3_bucket,
                       large_item_bytes=64)


def test_a_large_value_goes_to_s3_and_its_object_leaves_with_the_key(aws, s3, small_items: StoreConfig,
                                                                     boto_session) -> None:
    from updraft.store.tables import create_table

    create_table(small_items, client=boto_session.client("dynamodb"))
    store = DynamoStore(small_items, s3_client=s3)
    big = {"rows": list(range(2000))}
    store.set_task_state(TI, "result", big, expires_at=None, now=NOW)
    assert store.get_task_state(TI, "result", now=NOW).value == big
    assert s3.list_objects_v2(Bucket=small_items.s3_bucket).get("KeyCount") == 1
    store.delete_task_state(TI, "result")
    assert s3.list_objects_v2(Bucket=small_items.s3_bucket).get("KeyCount") == 0
