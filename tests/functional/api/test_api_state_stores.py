"""The task and asset state store routes (Airflow 3.3's ``Task State Store`` and ``Asset State Store`` tags) on
moto: what a task kept is listed, read, set, patched, deleted and cleared as Airflow's routes do it."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.functional.api.conftest import NOW
from updraft.model.records import TIKey
from updraft.model.states import TaskInstanceState

STORE = "/api/v2/dags/etl/dagRuns/r1/taskInstances/extract/state-store"
LATER = dt.datetime(2024, 3, 2, tzinfo=dt.UTC)


@pytest.mark.slow
def test_task_state_store_routes(api, store, monkeypatch):
    api("POST", "/api/v2/dags/etl/dagRuns", body={"dag_run_id": "r1", "logical_date": "2024-02-01T00:00:00Z"})
    key = TIKey("etl", "r1", "extract")
    store.set_task_state(key, "job_id", "job-1", expires_at=None, now=NOW)  # what the task kept

    assert api("PUT", STORE + "/status", body={"value": {"phase": "running"}, "expires_at": None}).status == 204
    assert api("PUT", STORE + "/soon", body={"value": 1, "expires_at": "2024-01-01T00:00:00Z"}).status == 204
    defaulted = api("PUT", STORE + "/defaulted", body={"value": [1, 2]})  # "default": [state_store]'s 30 days
    assert defaulted.status == 204
    listed = api.get(STORE)
    assert listed.status == 200 and listed.body["total_entries"] == 3  # "soon" expired already: not shown
    assert [e["key"] for e in listed.body["task_state_store"]] == ["defaulted", "job_id", "status"]
    assert listed.body["task_state_store"][1] == {"key": "job_id", "value": "job-1",
                                                  "updated_at": "2024-03-01T00:00:00Z", "expires_at": None}
    assert api.get(STORE + "/defaulted").body["expires_at"] is not None
    assert api.get(STORE, query={"limit": 1, "offset": 1}).body["task_state_store"][0]["key"] == "job_id"

    patched = api("PATCH", STORE + "/status", body={"value": {"phase": "done"}})
    assert (patched.status, patched.body) == (200, None)
    assert api.get(STORE + "/status").body["value"] == {"phase": "done"}
    assert api("PATCH", STORE + "/missing", body={"value": 1}).status == 404

    assert api("PUT", STORE + "/k", body={"value": None}).status == 422
    assert api("PUT", STORE + "/k", body={"value": 1, "expires_at": "2024-01-01T00:00:00"}).status == 422  # naive
    assert api("PUT", STORE + "/k", body={"value": 1, "ttl": 5}).status == 422  # not Airflow's field
    monkeypatch.setenv("AIRFLOW__STATE_STORE__MAX_VALUE_STORAGE_BYTES", "10")
    assert api("PUT", STORE + "/k", body={"value": "x" * 20}).status == 422
    monkeypatch.delenv("AIRFLOW__STATE_STORE__MAX_VALUE_STORAGE_BYTES")
    monkeypatch.setenv("AIRFLOW__STATE_STORE__DEFAULT_RETENTION_DAYS", "-1")  # only a "default" expiry reads it
    refused = api("PUT", STORE + "/k", body={"value": 1})
    assert (refused.status, refused.body) == (400, {"detail": "[state_store] default_retention_days must be >= 0, "
                                                              "got -1. Set to 0 to disable expiry."})
    assert api("PUT", STORE + "/k", body={"value": 1, "expires_at": None}).status == 204
    assert api("DELETE", STORE + "/k").status == 204
    monkeypatch.delenv("AIRFLOW__STATE_STORE__DEFAULT_RETENTION_DAYS")
    # Writes need the task instance; reads of one that does not exist find nothing.
    other = "/api/v2/dags/etl/dagRuns/r1/taskInstances/nope/state-store"
    assert api("PUT", other + "/k", body={"value": 1}).status == 404
    assert api.get(other).body == {"task_state_store": [], "total_entries": 0}
    assert api.get(STORE + "/k", query={"map_index": 0}).status == 404

    assert api("DELETE", STORE + "/status").status == 204
    assert api("DELETE", STORE + "/status").status == 204  # no-op when already gone
    assert api("DELETE", STORE).status == 204
    assert store.list_task_state(key, now=NOW) == []
    _deleting_a_run_or_its_dag_removes_its_task_state(api, store)  # the same module's run: one seeded table


@pytest.mark.slow
def test_asset_state_store_routes(api, store):
    asset_id = store.declare_asset(name="orders/daily", uri="s3://warehouse/orders/daily", group=None, extra=None,
                                   now=NOW)
    store.set_asset_state("orders/daily", "watermark", "2026-01-01", now=NOW, writer=TIKey("p", "r", "load", -1))
    base = f"/api/v2/assets/{asset_id}/state-store"

    assert api("PUT", base + "/total_runs", body={"value": 3}).status == 204
    listed = api.get(base)
    assert listed.body["total_entries"] == 2
    assert listed.body["asset_state_store"][1] == {
        "key": "watermark", "value": "2026-01-01", "updated_at": "2024-03-01T00:00:00Z",
        "last_updated_by": {"kind": "task", "dag_id": "p", "run_id": "r", "task_id": "load", "map_index": -1}}
    assert api.get(base + "/total_runs").body["last_updated_by"] == {
        "kind": "api", "dag_id": None, "run_id": None, "task_id": None, "map_index": None}
    assert api.get(base + "/nope").status == 404
    assert api.get("/api/v2/assets/12345/state-store").status == 404  # no such asset
    assert api("DELETE", base + "/total_runs").status == 204
    assert api("DELETE", base).status == 204
    assert api.get(base).body == {"asset_state_store": [], "total_entries": 0}


def _deleting_a_run_or_its_dag_removes_its_task_state(api, store) -> None:
    """As Airflow's rows go with their run: a new run given the same run id must not find an old job id."""
    api("POST", "/api/v2/dags/etl/dagRuns", body={"dag_run_id": "r2", "logical_date": "2024-02-02T00:00:00Z"})
    for run_id in ("r1", "r2"):
        store.transition_ti(TIKey("etl", run_id, "extract"), expected=[None], state=TaskInstanceState.SUCCESS,
                            fields={"try_number": 1})
        store.set_task_state(TIKey("etl", run_id, "extract"), "job_id", "job-1", expires_at=None, now=NOW)
    assert api("DELETE", "/api/v2/dags/etl/dagRuns/r1").status == 204
    assert store.list_task_state(TIKey("etl", "r1", "extract"), now=NOW) == []
    assert store.list_task_state(TIKey("etl", "r2", "extract"), now=NOW) != []
    assert api("DELETE", "/api/v2/dags/etl").status == 204
    assert store.list_task_state(TIKey("etl", "r2", "extract"), now=NOW) == []
