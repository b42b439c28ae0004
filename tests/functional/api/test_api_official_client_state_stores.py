"""Airflow's official Python client (apache-airflow-client 3.3.2) on the state store routes: its strict models
parse every answer (``TaskStateStoreCollectionResponse``, ``AssetStateStoreResponse`` with its writer kind)."""

from __future__ import annotations

from airflow_client.client.api.asset_state_store_api import AssetStateStoreApi
from airflow_client.client.api.task_state_store_api import TaskStateStoreApi
from airflow_client.client.models.asset_state_store_body import AssetStateStoreBody
from airflow_client.client.models.task_state_store_body import TaskStateStoreBody
from airflow_client.client.models.task_state_store_patch_body import TaskStateStorePatchBody

from tests.functional.api.conftest import NOW
from tests.functional.api.test_api_official_client import client  # noqa: F401  (the fixture)
from updraft.model.records import TIKey


def test_task_and_asset_state_store_through_the_official_client(client, api, store):  # noqa: F811
    api("POST", "/api/v2/dags/etl/dagRuns", body={"dag_run_id": "r1", "logical_date": "2024-02-01T00:00:00Z"})
    store.set_task_state(TIKey("etl", "r1", "extract"), "job_id", "job-1", expires_at=None, now=NOW)
    tasks = TaskStateStoreApi(client)
    tasks.set_task_state_store("status", "etl", "r1", "extract", TaskStateStoreBody(value={"phase": "running"}))
    tasks.patch_task_state_store("status", "etl", "r1", "extract", TaskStateStorePatchBody(value="done"))
    listed = tasks.list_task_state_store("etl", "r1", "extract")
    assert listed.total_entries == 2 and [e.key for e in listed.task_state_store] == ["job_id", "status"]
    status = tasks.get_task_state_store("status", "etl", "r1", "extract")
    assert status.value == "done" and status.expires_at is not None  # the default retention
    tasks.delete_task_state_store("status", "etl", "r1", "extract")
    tasks.clear_task_state_store("etl", "r1", "extract")
    assert tasks.list_task_state_store("etl", "r1", "extract").total_entries == 0

    asset_id = store.declare_asset(name="orders/daily", uri="s3://warehouse/orders/daily", group=None, extra=None,
                                   now=NOW)
    assets = AssetStateStoreApi(client)
    assets.set_asset_state_store("watermark", asset_id, AssetStateStoreBody(value="2026-01-01"))
    entry = assets.get_asset_state_store("watermark", asset_id)
    assert entry.value == "2026-01-01" and entry.last_updated_by.kind.value == "api"
    assert assets.list_asset_state_store(asset_id).total_entries == 1
    assets.clear_asset_state_store(asset_id)
