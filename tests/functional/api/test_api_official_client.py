"""Airflow's official Python client (apache-airflow-client 3.3.2) against the API handler, served over HTTP as
local mode serves it (``updraft.local.api_gateway.LocalApiGateway``).

The client parses every response with its strict pydantic models (required fields, types, enums): each call
returning without a ValidationError is the compatibility proof for that route.
"""

from __future__ import annotations

import datetime as dt
import json
import urllib.request

import airflow_client.client as af
import boto3
import pytest
from airflow_client.client.api.config_api import ConfigApi
from airflow_client.client.api.dag_api import DAGApi
from airflow_client.client.api.dag_run_api import DagRunApi
from airflow_client.client.api.dag_stats_api import DagStatsApi
from airflow_client.client.api.import_error_api import ImportErrorApi
from airflow_client.client.api.monitor_api import MonitorApi
from airflow_client.client.api.plugin_api import PluginApi
from airflow_client.client.api.pool_api import PoolApi
from airflow_client.client.api.task_api import TaskApi
from airflow_client.client.api.task_instance_api import TaskInstanceApi
from airflow_client.client.api.version_api import VersionApi
from airflow_client.client.api.x_com_api import XComApi
from airflow_client.client.exceptions import (
    BadRequestException,
    ConflictException,
    ForbiddenException,
    NotFoundException,
)
from airflow_client.client.models.clear_task_instances_body import ClearTaskInstancesBody
from airflow_client.client.models.dag_patch_body import DAGPatchBody
from airflow_client.client.models.dag_run_clear_body import DAGRunClearBody
from airflow_client.client.models.dag_run_patch_body import DAGRunPatchBody
from airflow_client.client.models.dag_runs_batch_body import DAGRunsBatchBody
from airflow_client.client.models.patch_task_instance_body import PatchTaskInstanceBody
from airflow_client.client.models.pool_body import PoolBody
from airflow_client.client.models.pool_patch_body import PoolPatchBody
from airflow_client.client.models.trigger_dag_run_post_body import TriggerDAGRunPostBody
from airflow_client.client.models.update_hitl_detail_payload import UpdateHITLDetailPayload

from tests.functional.api.conftest import BUCKET, REGION
from tests.functional.lambda_helpers import lambda_context
from updraft.local.api_gateway import LocalApiGateway
from updraft.model import hitl
from updraft.model.records import TIKey
from updraft.model.states import TaskInstanceState
from updraft.runtime.logs import S3LogSink


@pytest.fixture
def client(store, monkeypatch):
    """An ApiClient on a local HTTP server in front of the handler, local mode's way (every caller admin)."""
    from functions.api import handler

    monkeypatch.setenv("UPDRAFT_LOCAL_COMPUTE", "/tmp/updraft-test-compute.sock")  # local mode: tokens issued
    monkeypatch.setattr("updraft.services._shared", None)
    gateway = LocalApiGateway(lambda event: handler.handler(event, lambda_context("api")))
    try:
        request = urllib.request.Request(f"{gateway.url}/auth/token", method="POST",
                                         headers={"Content-Type": "application/json"},
                                         data=json.dumps({"username": "admin", "password": "admin"}).encode())
        token = json.load(urllib.request.urlopen(request, timeout=30))["access_token"]
        with af.ApiClient(af.Configuration(host=gateway.url, access_token=token)) as api:
            yield api
    finally:
        gateway.close()


def test_list_get_pause_and_unpause_dags(client):
    dags = DAGApi(client)
    listed = dags.get_dags(limit=100, offset=0)
    assert listed.total_entries == 3 and [d.dag_id for d in listed.dags] == ["etl", "fanout", "reporting"]
    assert dags.get_dag("fanout").dag_display_name == "Fan out"
    details = dags.get_dag_details("etl")
    assert details.params["n"]["value"] == 1 and details.catchup is False
    assert dags.patch_dag("etl", DAGPatchBody(is_paused=True)).is_paused is True
    assert dags.patch_dag("etl", DAGPatchBody(is_paused=False), update_mask=["is_paused"]).is_paused is False
    assert [d.dag_id for d in dags.get_dags(paused=True).dags] == ["fanout"]
    by_pattern = dags.patch_dags(DAGPatchBody(is_paused=True), dag_id_pattern="rep")
    assert [(d.dag_id, d.is_paused) for d in by_pattern.dags] == [("reporting", True)]
    assert dags.get_dag_tags().tags == ["daily", "team-a", "team-b"]
    tasks = TaskApi(client).get_tasks("etl")
    assert [t.task_id for t in tasks.tasks] == ["extract", "load"] and tasks.tasks[1].retry_delay.seconds == 300
    with pytest.raises(NotFoundException) as missing:
        dags.get_dag("nope")
    assert json.loads(missing.value.body) == {"detail": "Dag with dag_id: 'nope' not found"}


@pytest.mark.slow
def test_trigger_with_conf_list_runs_and_read_task_instances(client, store):
    runs = DagRunApi(client)
    run = runs.trigger_dag_run("etl", TriggerDAGRunPostBody(dag_run_id="manual__client", conf={"n": 3}))
    assert (run.dag_run_id, run.state.value, run.run_type.value, run.conf) == ("manual__client", "queued",
                                                                               "manual", {"n": 3})
    with pytest.raises(ConflictException):
        runs.trigger_dag_run("etl", TriggerDAGRunPostBody(dag_run_id="manual__client"))
    with pytest.raises(BadRequestException):
        runs.trigger_dag_run("etl", TriggerDAGRunPostBody(conf={"n": "three"}))
    with pytest.raises(NotFoundException):
        runs.trigger_dag_run("nope", TriggerDAGRunPostBody())
    assert runs.get_dag_run("etl", "manual__client").conf == {"n": 3}
    dated = runs.trigger_dag_run("etl", TriggerDAGRunPostBody(dag_run_id="manual__2024-02-01T00:00:00+00:00",
                                                              logical_date="2024-02-01T00:00:00+00:00"))
    assert runs.get_dag_run("etl", dated.dag_run_id).dag_run_id == "manual__2024-02-01T00:00:00+00:00"
    batch = runs.get_list_dag_runs_batch("~", DAGRunsBatchBody(dag_ids=["etl"], states=["queued"], page_limit=1))
    assert batch.total_entries == 2 and len(batch.dag_runs) == 1
    listed = runs.get_dag_runs("~", state=["queued"], order_by=["-run_after"], limit=10, offset=0)
    assert listed.total_entries == 2 and {r.dag_run_id for r in listed.dag_runs} == {
        "manual__client", "manual__2024-02-01T00:00:00+00:00"}

    store.transition_ti(TIKey("etl", "manual__client", "extract"), expected=[None],
                        state=TaskInstanceState.UP_FOR_RETRY, fields={"try_number": 1, "pool": "etl_pool"})
    tis = TaskInstanceApi(client)
    found = tis.get_task_instances("etl", "manual__client")
    assert [(t.task_id, t.state and t.state.value) for t in found.task_instances] == [
        ("extract", "up_for_retry"), ("load", None)]
    blocking = tis.get_task_instance_dependencies("etl", "manual__client", "load")
    assert [d.name for d in blocking.dependencies] == ["Dagrun Running"]  # the run is still queued
    one = tis.get_task_instance("etl", "manual__client", "extract")
    assert (one.try_number, one.max_tries, one.pool) == (1, 0, "etl_pool")
    assert tis.get_task_instances("~", "~").total_entries == 4
    stats = DagStatsApi(client).get_dag_stats(dag_ids=["etl"])
    assert [(s.state.value, s.count) for s in stats.dags[0].stats] == [("queued", 2), ("running", 0), ("success", 0), ("failed", 0)]
    runs.trigger_dag_run("fanout", TriggerDAGRunPostBody(dag_run_id="f1"))
    store.transition_ti(TIKey("fanout", "f1", "double", 0), expected=[None], state=TaskInstanceState.RUNNING)
    mapped = tis.get_mapped_task_instances("fanout", "f1", "double")
    assert [(t.map_index, t.state.value) for t in mapped.task_instances] == [(0, "running")]
    assert tis.get_mapped_task_instance("fanout", "f1", "double", 0).state.value == "running"


def test_pools_crud_and_import_errors(client):
    pools = PoolApi(client)
    created = pools.post_pool(PoolBody(name="etl_pool", slots=4, description="ETL"))
    assert (created.name, created.slots, created.open_slots) == ("etl_pool", 4, 4)
    assert pools.patch_pool("etl_pool", PoolPatchBody(slots=5), update_mask=["slots"]).slots == 5
    assert [p.name for p in pools.get_pools().pools] == ["default_pool", "etl_pool"]
    assert pools.get_pool("default_pool").slots == 128
    pools.delete_pool("etl_pool")
    with pytest.raises(NotFoundException):
        pools.get_pool("etl_pool")
    with pytest.raises(BadRequestException):
        pools.delete_pool("default_pool")

    errors = ImportErrorApi(client)
    listed = errors.get_import_errors()
    assert listed.total_entries == 1 and listed.import_errors[0].filename == "broken.py"
    assert errors.get_import_error(listed.import_errors[0].import_error_id).stack_trace.startswith("Traceback")


def test_health_and_version(client):
    assert MonitorApi(client).get_health().metadatabase.status == "healthy"
    assert VersionApi(client).get_version().version == "3.3.2"


def test_config_hidden_then_exposed_with_sensitive_values_masked(client, monkeypatch):
    with pytest.raises(ForbiddenException):
        ConfigApi(client).get_config()
    monkeypatch.setenv("AIRFLOW__API__EXPOSE_CONFIG", "True")
    monkeypatch.setenv("AIRFLOW__SECRETS__BACKEND_KWARGS", '{"connections_prefix": "p"}')
    monkeypatch.setattr("updraft.services._shared", None)
    config = ConfigApi(client).get_config()
    options = {(s.name, o.key): o.value.actual_instance for s in config.sections for o in s.options}
    assert options[("secrets", "backend_kwargs")] == "< hidden >" and options[("api", "expose_config")] == "True"
    one = ConfigApi(client).get_config_value("core", "parallelism")
    assert one.sections[0].options[0].value.actual_instance == options[("core", "parallelism")]


def test_plugins_and_their_import_errors(client, store):
    from updraft.model.parse_results import ParsedFile, PluginsReport
    from updraft.scheduling.commands.dag_registration import register_parsed_file

    info = {key: [] for key in ("macros", "flask_blueprints", "fastapi_apps", "fastapi_root_middlewares",
                                "react_apps", "appbuilder_views", "appbuilder_menu_items", "operator_extra_links",
                                "global_operator_extra_links", "listeners", "priority_weight_strategies")}
    info.update(name="company", source="$PLUGINS_FOLDER/company.py", timetables=["company.Workdays"],
                external_views=[{"name": "Wiki", "href": "https://wiki.example.com", "destination": "nav"}])
    register_parsed_file(store, ParsedFile(relative_path="x.py", file_hash="h", plugins=PluginsReport(
        plugins=[info], import_errors={"/plugins/bad.py": "boom"})), now=dt.datetime.now(dt.UTC))
    [plugin] = PluginApi(client).get_plugins().plugins
    assert plugin.name == "company" and plugin.timetables == ["company.Workdays"]
    assert plugin.external_views[0].href == "https://wiki.example.com"
    errors = PluginApi(client).import_errors()
    assert errors.total_entries == 1 and errors.import_errors[0].source == "/plugins/bad.py"


def test_logs_by_try_and_xcoms(client, store):
    DagRunApi(client).trigger_dag_run("etl", TriggerDAGRunPostBody(dag_run_id="r1"))
    key = TIKey("etl", "r1", "extract")
    ended = dt.datetime(2024, 3, 1, tzinfo=dt.UTC)
    store.transition_ti(key, expected=[None], state=TaskInstanceState.SUCCESS,
                        fields={"try_number": 1, "pool": "etl_pool", "end_date": ended})
    store.put_xcom(key, "return_value", [1, 2, 3], now=ended)
    S3LogSink(boto3.client("s3", region_name=REGION), BUCKET).write(key, 1, "hello\nworld\n")

    log = TaskInstanceApi(client).get_log("etl", "r1", "extract", 1, map_index=-1, full_content=True)
    assert [m.event for m in log.content.actual_instance] == ["hello", "world"]
    assert log.continuation_token is None
    xcoms = XComApi(client)
    entries = xcoms.get_xcom_entries(dag_id="etl", dag_run_id="r1", task_id="extract")
    assert [e.key for e in entries.xcom_entries] == ["return_value"]
    entry = xcoms.get_xcom_entry(dag_id="etl", task_id="extract", dag_run_id="r1", xcom_key="return_value",
                                 deserialize=True)
    assert entry.actual_instance.value == [1, 2, 3]


def test_dag_source_event_logs_delete_and_heartbeats(client, store):
    from airflow_client.client.api.dag_source_api import DagSourceApi
    from airflow_client.client.api.event_log_api import EventLogApi

    boto3.client("s3", region_name=REGION).put_object(Bucket=BUCKET, Key="dags/etl.py", Body=b"# etl\n")
    source = DagSourceApi(client).get_dag_source("etl", accept="application/json")
    assert (source.content, source.version_number) == ("# etl\n", None)
    store.heartbeat_component("scheduler", dt.datetime.now(dt.UTC), every=dt.timedelta(seconds=30))
    assert MonitorApi(client).get_health().scheduler.status == "healthy"
    DAGApi(client).patch_dag("etl", DAGPatchBody(is_paused=True))
    DAGApi(client).delete_dag("reporting")
    with pytest.raises(NotFoundException):
        DAGApi(client).get_dag("reporting")
    logs = EventLogApi(client).get_event_logs(order_by=["-id"])
    assert [(e.event, e.dag_id) for e in logs.event_logs] == [("delete_dag", "reporting"), ("patch_dag", "etl")]
    assert EventLogApi(client).get_event_log(logs.event_logs[0].event_log_id).event == "delete_dag"


def test_clear_mark_and_delete_runs_and_task_instances(client, store):
    """The mutating routes (issue 13) and the tries routes, parsed by the client's strict models."""
    runs, tis = DagRunApi(client), TaskInstanceApi(client)
    runs.trigger_dag_run("etl", TriggerDAGRunPostBody(dag_run_id="c1", logical_date=None))
    store.transition_ti(TIKey("etl", "c1", "extract"), expected=[None], state=TaskInstanceState.FAILED,
                        fields={"try_number": 1, "pool": "etl_pool"})
    # The client cannot parse a dry run's list from any server (each item matches both of its oneOf models,
    # TaskInstanceResponse and NewTaskResponse), so that answer is read as JSON.
    dry = json.loads(runs.clear_dag_run_without_preload_content("etl", "c1", DAGRunClearBody(only_failed=True)).data)
    assert [t["task_id"] for t in dry["task_instances"]] == ["extract"]
    cleared = runs.clear_dag_run("etl", "c1", DAGRunClearBody(dry_run=False, only_failed=True, note="again"))
    assert cleared.actual_instance.note == "again"
    tries = tis.get_task_instance_tries("etl", "c1", "extract")
    assert [(t.try_number, t.state) for t in tries.task_instances] == [(1, "failed"), (1, None)]
    assert tis.get_task_instance_try_details("etl", "c1", "extract", 1).max_tries == 1
    listed = tis.post_clear_task_instances("etl", ClearTaskInstancesBody(dag_run_id="c1", only_failed=False))
    assert listed.total_entries == 1

    marked = tis.patch_task_instance("etl", "c1", "extract", PatchTaskInstanceBody(new_state="success", note="ok"))
    assert [(t.state, t.note) for t in marked.task_instances] == [("success", "ok")]
    would = tis.patch_task_instance_dry_run("etl", "c1", "load", PatchTaskInstanceBody(new_state="skipped"))
    assert [t.task_id for t in would.task_instances] == ["load"]
    with pytest.raises(ConflictException):
        tis.patch_task_instance("etl", "c1", "extract", PatchTaskInstanceBody(new_state="success"))
    failed = runs.patch_dag_run("etl", "c1", DAGRunPatchBody(state="failed", note="given up"))
    assert (failed.state, failed.note) == ("failed", "given up")
    runs.delete_dag_run("etl", "c1")
    with pytest.raises(NotFoundException):
        runs.get_dag_run("etl", "c1")


@pytest.mark.slow
def test_assets_through_the_official_client(client, store):
    from airflow_client.client.api.asset_api import AssetApi
    from airflow_client.client.models.create_asset_events_body import CreateAssetEventsBody

    from tests.functional.api.asset_helpers import seed_assets, seed_watched_assets
    from updraft.store.assets import asset_id_of

    seed_assets(store)
    seed_watched_assets(store)
    assets = AssetApi(client)
    [watcher] = assets.get_asset(asset_id_of("orders")).watchers
    assert watcher.name == "orders_queue" and isinstance(watcher.trigger_id, int)
    listed = assets.get_assets(name_pattern="raw")
    assert listed.total_entries == 1 and listed.assets[0].uri == "s3://bucket/raw"
    raw_id = listed.assets[0].id
    assert assets.get_asset(raw_id).scheduled_dags[0].dag_id == "use_raw"
    alias = assets.get_asset_aliases().asset_aliases[0]
    assert assets.get_asset_alias(alias.id)["name"] == "al"  # the client types this response as a plain object
    event = assets.create_asset_event(CreateAssetEventsBody(asset_id=raw_id, extra={"k": 1}))
    assert event.asset_id == raw_id and event.extra["k"] == 1
    assert [e.id for e in assets.get_asset_events(asset_id=raw_id).asset_events] == [event.id]
    assert assets.get_dag_asset_queued_events("use_raw").queued_events[0].asset_id == raw_id
    assert assets.get_asset_queued_events(raw_id).total_entries == 1
    assert assets.get_dag_asset_queued_event("use_raw", raw_id).dag_id == "use_raw"
    assets.delete_dag_asset_queued_event("use_raw", raw_id)
    assert assets.get_dag_asset_queued_events("use_raw").total_entries == 0
    assert assets.materialize_asset(raw_id).run_type == "asset_materialization"


def test_human_in_the_loop_details_list_get_and_respond(client, store):
    DagRunApi(client).trigger_dag_run("etl", TriggerDAGRunPostBody(dag_run_id="h1"))
    key = TIKey("etl", "h1", "extract")
    request = hitl.request_record({"options": ["go", "stop"], "subject": "Go?", "assigned_users": [],
                                   "params": {"why": {"value": "", "description": None, "schema": {}}}},
                                  try_number=1, now=dt.datetime(2024, 3, 1, tzinfo=dt.UTC))
    store.transition_ti(key, expected=[None], state=TaskInstanceState.DEFERRED, fields={
        "try_number": 1, "try_id": "tok", "next_method": "execute_complete", "next_kwargs": {}, "hitl": request,
        "trigger": {"classpath": hitl.CLASSPATH, "kwargs": {}, "kind": "wait", "timeout_at": None,
                    "created_at": "2024-03-01T00:00:00+00:00"}})
    tis = TaskInstanceApi(client)
    listed = tis.get_hitl_details("~", "~", response_received=False)
    assert listed.total_entries == 1 and listed.hitl_details[0].task_instance.task_id == "extract"
    one = tis.get_hitl_detail("etl", "h1", "extract", -1)
    assert (one.subject, one.options, one.response_received) == ("Go?", ["go", "stop"], False)
    answer = tis.update_hitl_detail("etl", "h1", "extract", -1,
                                    UpdateHITLDetailPayload(chosen_options=["go"], params_input={"why": "ok"}))
    assert answer.chosen_options == ["go"] and answer.responded_by.name == answer.responded_by.id  # the caller
    assert tis.get_hitl_detail_try_detail("etl", "h1", "extract", -1, 1).response_received is True
    with pytest.raises(ConflictException):
        tis.update_hitl_detail("etl", "h1", "extract", -1, UpdateHITLDetailPayload(chosen_options=["stop"]))
    assert store.get_ti(key).state == TaskInstanceState.SCHEDULED
