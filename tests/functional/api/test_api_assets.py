"""The asset routes on the API handler: definitions from parsing, events (list and POST), queued events and
their deletion, materialize, and a run's upstream events."""

from __future__ import annotations

import pytest

from tests.functional.api.asset_helpers import seed_assets, seed_watched_assets
from tests.functional.api.conftest import NOW
from updraft.scheduling.asset_triggers import create_asset_triggered_runs
from updraft.scheduling.dag_versions import pinned_dag
from updraft.store.assets import asset_id_of


@pytest.fixture
def assets(store):
    seed_assets(store)
    return store


def test_assets_list_and_get(api, assets):
    listed = api.get("/api/v2/assets", query={"name_pattern": "raw"})
    assert listed.status == 200 and listed.body["total_entries"] == 1
    raw = listed.body["assets"][0]
    assert raw["id"] == asset_id_of("raw") and raw["uri"] == "s3://bucket/raw" and raw["extra"] == {"owner": "data"}
    assert [d["dag_id"] for d in raw["scheduled_dags"]] == ["use_raw"]
    assert [(t["dag_id"], t["task_id"]) for t in raw["producing_tasks"]] == [("make_raw", "make")]
    assert api.get(f"/api/v2/assets/{raw['id']}").body["name"] == "raw"
    assert api.get("/api/v2/assets/12345").status == 404
    aliases = api.get("/api/v2/assets/aliases").body
    assert [a["name"] for a in aliases["asset_aliases"]] == ["al"]
    assert api.get(f"/api/v2/assets/aliases/{aliases['asset_aliases'][0]['id']}").body["name"] == "al"


def test_assets_list_their_watchers_as_airflow(api, store):
    seed_watched_assets(store)
    seed_assets(store)
    orders = api.get(f"/api/v2/assets/{asset_id_of('orders')}").body
    refunds = api.get(f"/api/v2/assets/{asset_id_of('refunds')}").body
    [watcher] = orders["watchers"]
    assert set(watcher) == {"name", "trigger_id", "created_date"}
    assert watcher["name"] == "orders_queue" and watcher["created_date"] == orders["created_at"]
    # one queue is one trigger, as Airflow's deduplicated trigger row: both watchers point at it
    assert [w["name"] for w in refunds["watchers"]] == ["refunds_queue"]
    assert refunds["watchers"][0]["trigger_id"] == watcher["trigger_id"]
    assert api.get(f"/api/v2/assets/{asset_id_of('raw')}").body["watchers"] == []


def test_post_event_queues_the_consumer_and_events_list(api, assets):
    raw_id, other_id = asset_id_of("raw"), asset_id_of("other")
    posted = api("POST", "/api/v2/assets/events", body={"asset_id": raw_id, "extra": {"k": 1}})
    assert posted.status == 200, posted.body
    assert posted.body["extra"] == {"k": 1, "from_rest_api": True} and posted.body["asset_id"] == raw_id
    events = api.get("/api/v2/assets/events", query={"asset_id": raw_id}).body
    assert events["total_entries"] == 1 and events["asset_events"][0]["id"] == posted.body["id"]
    queued = api.get("/api/v2/dags/use_raw/assets/queuedEvents").body
    assert [q["asset_id"] for q in queued["queued_events"]] == [raw_id]
    assert api.get(f"/api/v2/assets/{raw_id}/queuedEvents").body["total_entries"] == 1
    assert api.get(f"/api/v2/dags/use_raw/assets/{raw_id}/queuedEvents").body["dag_id"] == "use_raw"
    keyed = api("POST", "/api/v2/assets/events", body={"asset_id": raw_id, "partition_key": "p"})
    assert keyed.status == 200 and keyed.body["partition_key"] == "p"  # a partitioned event: use_raw is not keyed
    assert api.get("/api/v2/dags/use_raw/assets/queuedEvents").body["total_entries"] == 1

    # the second asset completes raw & other: one run, whose upstream events are both
    api("POST", "/api/v2/assets/events", body={"asset_id": other_id})
    runs = create_asset_triggered_runs(assets, lambda d, h: pinned_dag(assets, d, h), now=NOW)
    assert [r.dag_id for r in runs] == ["use_raw"]
    upstream = api.get(f"/api/v2/dags/use_raw/dagRuns/{runs[0].run_id}/upstreamAssetEvents").body
    assert sorted(e["name"] for e in upstream["asset_events"]) == ["other", "raw"]
    assert api.get("/api/v2/dags/use_raw/assets/queuedEvents").body["total_entries"] == 0


def test_post_event_access_control_is_checked_and_without_multi_team_filters_nothing(api, assets):
    raw_id = asset_id_of("raw")
    control = {"consumer_teams": ["team_ml"], "allow_global": False}
    assert api("POST", "/api/v2/assets/events", body={"asset_id": raw_id, "access_control": control}).status == 200
    queued = api.get("/api/v2/dags/use_raw/assets/queuedEvents").body  # a teamless consumer, queued all the same
    assert [q["asset_id"] for q in queued["queued_events"]] == [raw_id]
    wrong = api("POST", "/api/v2/assets/events", body={"asset_id": raw_id,
                                                       "access_control": {"allow_global": "no", "teams": []}})
    assert wrong.status == 422
    assert sorted((i["type"], tuple(i["loc"])) for i in wrong.body["detail"]) == [
        ("bool_type", ("body", "access_control", "allow_global")),
        ("extra_forbidden", ("body", "access_control", "teams"))]
    assert api("DELETE", "/api/v2/dags/use_raw/assets/queuedEvents").status == 204


def test_delete_queued_events(api, assets):
    raw_id = asset_id_of("raw")
    api("POST", "/api/v2/assets/events", body={"asset_id": raw_id})
    assert api("DELETE", "/api/v2/dags/use_raw/assets/queuedEvents").status == 204
    assert api.get("/api/v2/dags/use_raw/assets/queuedEvents").body["total_entries"] == 0
    assert api("DELETE", "/api/v2/dags/use_raw/assets/queuedEvents").status == 404


def test_materialize_runs_the_producing_dag(api, assets):
    answer = api("POST", f"/api/v2/assets/{asset_id_of('raw')}/materialize")
    assert answer.status == 200, answer.body
    assert answer.body["dag_id"] == "make_raw" and answer.body["run_type"] == "asset_materialization"
    assert api("POST", f"/api/v2/assets/{asset_id_of('other')}/materialize").status == 404
