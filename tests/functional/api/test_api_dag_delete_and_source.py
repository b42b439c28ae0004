"""``GET /dagSources/{dag_id}`` from the environment's bucket, ``DELETE /dags/{dag_id}`` as Airflow's, and the
health document's heartbeats."""

from __future__ import annotations

import datetime as dt

import boto3

from tests.functional.api.conftest import BUCKET, NOW, REGION, example_dags
from tests.functional.lambda_helpers import lambda_context
from updraft.limits import Acquired, Claim, Need, acquire, room
from updraft.local.api_gateway import proxy_event
from updraft.model.limits import pool_limit
from updraft.model.parse_results import ParsedFile
from updraft.model.records import TIKey
from updraft.model.states import TaskInstanceState
from updraft.scheduling.commands.dag_registration import register_parsed_file
from updraft.scheduling.holding import limits_table
from updraft.serialization import serialize_dag
from updraft.store.heartbeats import DAG_PROCESSOR, HEARTBEAT_EVERY, SCHEDULER

SOURCE = "from airflow.sdk import DAG\n# the etl DAG\n"


def test_a_dag_s_source_is_read_from_the_bucket_as_json_or_text(api):
    boto3.client("s3", region_name=REGION).put_object(Bucket=BUCKET, Key="dags/etl.py", Body=SOURCE.encode())
    answer = api.get("/api/v2/dagSources/etl")
    assert (answer.status, answer.body) == (200, {"content": SOURCE, "dag_id": "etl", "version_number": None,
                                                  "dag_display_name": "etl"})
    event = proxy_event("GET", "/api/v2/dagSources/etl", {"Accept": "text/plain"}, b"")
    text = api.handler.handler(event, lambda_context("api"))
    assert (text["statusCode"], text["body"]) == (200, SOURCE)
    assert text["multiValueHeaders"]["Content-Type"] == ["text/plain"]


def test_dag_source_errors_are_airflow_s(api):
    assert api.get("/api/v2/dagSources/nope").status == 404
    assert api.get("/api/v2/dagSources/etl").status == 404  # the DAG exists, its file is not in the bucket
    assert api.get("/api/v2/dagSources/etl", headers={"Accept": "text/html"}).status == 406
    refused = api.get("/api/v2/dagSources/etl", query={"version_number": 1})
    assert refused.status == 400 and "version_number" in refused.body["detail"]


def test_an_api_that_may_not_read_dag_files_says_so(api, monkeypatch):
    from botocore.exceptions import ClientError

    def denied(*_args, **_kwargs):
        raise ClientError({"Error": {"Code": "AccessDenied", "Message": "Access Denied"}}, "GetObject")

    from updraft.services import shared_services

    monkeypatch.setattr(shared_services().client("s3"), "get_object", denied)
    answer = api.get("/api/v2/dagSources/etl")
    assert answer.status == 403 and "may not read DAG files" in answer.body["detail"]


def test_deleting_a_dag_deletes_its_runs_task_instances_and_xcoms_and_frees_their_slots(api, store):
    run_id = api("POST", "/api/v2/dags/etl/dagRuns", body={"logical_date": None}).body["dag_run_id"]
    key = TIKey("etl", run_id, "extract")
    store.set_pool("etl_pool", 4)
    table = limits_table(store)

    def holder(ticket, held):
        return store.transition_item(key, expected=[None], state=TaskInstanceState.QUEUED, ticket=ticket,
                                     held_ticket=held, fields={"try_number": 1, "pool": "etl_pool"})

    assert isinstance(acquire(table, [Claim(holder, (Need(pool_limit("etl_pool"), 1, 4),))]), Acquired)
    assert room(table, pool_limit("etl_pool")) == 3
    store.put_xcom(key, "return_value", 42, now=NOW)

    answer = api("DELETE", "/api/v2/dags/etl")
    assert (answer.status, answer.body) == (204, None)
    assert api.get("/api/v2/dags/etl").status == 404
    assert store.get_run("etl", run_id) is None and store.get_run_tis("etl", run_id) == []
    assert store.list_xcoms("etl", run_id, "extract") == {}
    assert room(table, pool_limit("etl_pool")) == 4
    assert api("DELETE", "/api/v2/dags/etl").status == 404
    assert [e["event"] for e in api.get("/api/v2/eventLogs", query={"dag_id": "etl"}).body["event_logs"]] == [
        "trigger_dag_run", "delete_dag"]

    # Its file still defines it: the next parse brings it back, new and paused, as in Airflow.
    etl = example_dags()[0]
    doc = serialize_dag(etl, relative_fileloc="etl.py", file_hash="h")
    register_parsed_file(store, ParsedFile(relative_path="etl.py", file_hash="h", dags=[doc]), now=NOW)
    back = api.get("/api/v2/dags/etl")
    assert back.status == 200 and back.body["is_paused"] is True
    assert api.get("/api/v2/dags/etl/dagRuns").body["total_entries"] == 0


def test_a_dag_with_a_running_task_is_not_deleted(api, store):
    run_id = api("POST", "/api/v2/dags/etl/dagRuns", body={"logical_date": None}).body["dag_run_id"]
    store.create_ti(TIKey("etl", run_id, "extract"), state=TaskInstanceState.RUNNING)
    answer = api("DELETE", "/api/v2/dags/etl")
    assert answer.status == 409 and answer.body == {"detail": "Task instances of dag with id: 'etl' are still running"}
    assert api.get("/api/v2/dags/etl").status == 200


def test_health_reports_the_scheduler_and_parser_heartbeats(api, store):
    now = dt.datetime.now(dt.UTC)
    assert store.heartbeat_component(SCHEDULER, now - dt.timedelta(minutes=10), every=HEARTBEAT_EVERY)
    stale = api.get("/api/v2/monitor/health").body
    assert stale["scheduler"]["status"] == "unhealthy" and stale["dag_processor"]["status"] is None
    assert store.heartbeat_component(SCHEDULER, now, every=HEARTBEAT_EVERY)
    assert store.heartbeat_component(DAG_PROCESSOR, now, every=HEARTBEAT_EVERY)
    health = api.get("/api/v2/monitor/health").body
    assert health["scheduler"]["status"] == "healthy" and health["dag_processor"]["status"] == "healthy"
    assert dt.datetime.fromisoformat(health["scheduler"]["latest_scheduler_heartbeat"]) == now


def test_a_heartbeat_is_written_at_most_every_30_s_per_process_and_never_moves_back(store):
    now = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)
    assert store.heartbeat_component(SCHEDULER, now, every=HEARTBEAT_EVERY)
    assert not store.heartbeat_component(SCHEDULER, now + dt.timedelta(seconds=10), every=HEARTBEAT_EVERY)
    assert store.last_heartbeat(SCHEDULER) == now
    other_process = type(store)(store.config)
    assert not other_process.heartbeat_component(SCHEDULER, now - dt.timedelta(seconds=5), every=HEARTBEAT_EVERY)
    assert store.last_heartbeat(SCHEDULER) == now
