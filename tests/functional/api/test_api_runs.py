"""DAG-run and task-instance routes on moto: trigger (conf, logical date, clashes), list (also ``~``), get."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from tests.functional.api.conftest import NOW, example_dags
from tests.functional.lambda_helpers import lambda_context
from updraft.model.parse_results import ImportErrorRecord, ParsedFile
from updraft.model.records import TIKey
from updraft.model.states import DagRunState, TaskInstanceState
from updraft.scheduling.commands.dag_registration import register_parsed_file
from updraft.serialization import serialize_dag


def _trigger(api, dag_id="etl", **body):
    return api("POST", f"/api/v2/dags/{dag_id}/dagRuns", body={"logical_date": None, **body})


def test_trigger_creates_a_queued_manual_run(api, store):
    answer = _trigger(api, dag_run_id="r1", conf={"n": 5}, logical_date="2024-02-01T00:00:00+02:00")
    assert answer.status == 200
    body = answer.body
    assert {k: body[k] for k in ("dag_run_id", "dag_id", "state", "run_type", "conf", "logical_date")} == {
        "dag_run_id": "r1", "dag_id": "etl", "state": "queued", "run_type": "manual", "conf": {"n": 5},
        "logical_date": "2024-01-31T22:00:00Z"}
    assert body["dag_versions"] == [] and body["run_after"].endswith("Z")
    run = store.get_run("etl", "r1")
    assert run.conf == {"n": 5} and run.logical_date == dt.datetime(2024, 1, 31, 22, tzinfo=dt.UTC)


def test_a_triggered_run_says_who_triggered_it_and_from_where(api, store):
    """As Airflow: a browser's trigger (it sends a Referer) is the UI's, any other the REST API's, and the run
    keeps the caller's name; runs of other types say their origin by their type."""
    by_api = _trigger(api, dag_run_id="api").body
    by_ui = api("POST", "/api/v2/dags/etl/dagRuns", body={"logical_date": None, "dag_run_id": "ui"},
                headers={"Referer": "https://updraft.example/dags/etl"}).body
    assert (by_api["triggered_by"], by_ui["triggered_by"]) == ("rest_api", "ui")
    caller = by_api["triggering_user_name"]
    assert caller and caller != "anonymous" and by_ui["triggering_user_name"] == caller
    assert api.get("/api/v2/dags/etl/dagRuns/ui").body["triggered_by"] == "ui"  # kept on the run, not the answer's
    assert store.get_run("etl", "api").triggering_user_name == caller


def test_trigger_without_a_run_id_names_it_after_the_logical_date(api):
    body = _trigger(api).body
    assert body["dag_run_id"] == f"manual__{body['logical_date'].replace('Z', '+00:00')}"


@pytest.mark.slow
def test_trigger_errors(api):
    assert _trigger(api, "nope").body == {"detail": "Dag with dag_id: 'nope' not found"}
    assert _trigger(api, "nope").status == 404
    invalid = _trigger(api, conf={"n": -1})
    assert invalid.status == 400 and "Invalid input for param n" in invalid.body["detail"]
    assert _trigger(api, dag_run_id="same").status == 200
    clash = _trigger(api, dag_run_id="same")
    assert clash.status == 409 and "already exists" in clash.body["detail"]
    assert _trigger(api, dag_run_id="a/b").status == 400  # a run id Airflow refuses


def test_trigger_body_validation(api):
    naive = _trigger(api, logical_date="2024-02-01T00:00:00")
    assert naive.status == 422
    assert naive.body["detail"] == [{"type": "timezone_aware", "loc": ["body", "logical_date"],
                                     "msg": "Input should have timezone info", "input": "2024-02-01T00:00:00"}]
    missing = api("POST", "/api/v2/dags/etl/dagRuns", body={"conf": {}})
    assert missing.status == 422 and missing.body["detail"][0]["loc"] == ["body", "logical_date"]
    not_a_dict = _trigger(api, conf=[1, 2])
    assert not_a_dict.status == 422 and not_a_dict.body["detail"][0]["type"] == "dict_type"
    partitioned = _trigger(api, partition_key="p")  # Airflow 3.3's asset partitions: the run is for partition "p"
    assert partitioned.status == 200 and partitioned.body["partition_key"] == "p"
    assert api.get(f"/api/v2/dags/etl/dagRuns/{partitioned.body['dag_run_id']}").body["partition_key"] == "p"


@pytest.mark.slow
def test_list_runs_of_one_dag_and_of_every_dag(api):
    for run_id in ("a", "b"):
        _trigger(api, dag_run_id=run_id)
    _trigger(api, "reporting", dag_run_id="c")
    one = api.get("/api/v2/dags/etl/dagRuns")
    assert [r["dag_run_id"] for r in one.body["dag_runs"]] == ["a", "b"] and one.body["total_entries"] == 2
    every = api.get("/api/v2/dags/~/dagRuns", query={"order_by": ["dag_id", "-run_id"]})
    assert [(r["dag_id"], r["dag_run_id"]) for r in every.body["dag_runs"]] == [
        ("etl", "b"), ("etl", "a"), ("reporting", "c")]
    assert api.get("/api/v2/dags/~/dagRuns", query={"state": "success"}).body["total_entries"] == 0
    assert api.get("/api/v2/dags/~/dagRuns", query={"state": "bogus"}).status == 422
    assert api.get("/api/v2/dags/~/dagRuns", query={"run_id_pattern": "b|c"}).body["total_entries"] == 2
    assert api.get("/api/v2/dags/etl/dagRuns", query={"logical_date_gte": "2999-01-01T00:00:00+0000"}
                   ).body["total_entries"] == 0
    assert api.get("/api/v2/dags/nope/dagRuns").status == 404


def test_get_run(api):
    _trigger(api, dag_run_id="r1")
    assert api.get("/api/v2/dags/etl/dagRuns/r1").body["dag_run_id"] == "r1"
    missing = api.get("/api/v2/dags/etl/dagRuns/nope")
    assert (missing.status, missing.body) == (
        404, {"detail": "The DagRun with dag_id: `etl` and run_id: `nope` was not found"})


def test_task_instances_include_the_tasks_not_reached_yet(api, store):
    _trigger(api, dag_run_id="r1")
    key = TIKey("etl", "r1", "extract")
    store.transition_ti(key, expected=[None], state=TaskInstanceState.RUNNING,
                        fields={"try_number": 1, "pool": "etl_pool", "start_date": dt.datetime(2024, 3, 1, tzinfo=dt.UTC)})
    answer = api.get("/api/v2/dags/etl/dagRuns/r1/taskInstances", query={"order_by": "task_id"})
    assert answer.status == 200 and answer.body["total_entries"] == 2
    extract, load = answer.body["task_instances"]
    assert (extract["task_id"], extract["state"], extract["try_number"], extract["pool"]) == (
        "extract", "running", 1, "etl_pool")
    assert (load["task_id"], load["state"], load["try_number"], load["map_index"], load["max_tries"]) == (
        "load", None, 0, -1, 2)
    assert extract["start_date"] == "2024-03-01T00:00:00Z" and extract["dag_run_id"] == "r1"
    assert api.get("/api/v2/dags/etl/dagRuns/r1/taskInstances", query={"state": "no_status"}
                   ).body["total_entries"] == 1
    assert api.get("/api/v2/dags/etl/dagRuns/r1/taskInstances", query={"state": "running"}
                   ).body["task_instances"][0]["task_id"] == "extract"
    single = api.get("/api/v2/dags/etl/dagRuns/r1/taskInstances/extract")
    assert single.status == 200 and single.body == extract
    assert api.get("/api/v2/dags/etl/dagRuns/r1/taskInstances/nope").status == 404
    assert api.get("/api/v2/dags/etl/dagRuns/nope/taskInstances").status == 404


def test_task_instances_across_runs_and_mapped_instances(api, store):
    _trigger(api, dag_run_id="r1")
    _trigger(api, "fanout", dag_run_id="f1")
    for index in range(3):
        store.transition_ti(TIKey("fanout", "f1", "double", index), expected=[None], state=TaskInstanceState.SUCCESS)
    every = api.get("/api/v2/dags/~/dagRuns/~/taskInstances", query={"order_by": ["dag_id", "task_id", "map_index"]})
    assert [(t["dag_id"], t["task_id"], t["map_index"]) for t in every.body["task_instances"]] == [
        ("etl", "extract", -1), ("etl", "load", -1), ("fanout", "double", 0), ("fanout", "double", 1),
        ("fanout", "double", 2)]
    assert every.body["task_instances"][2]["dag_display_name"] == "Fan out"
    mapped = api.get("/api/v2/dags/fanout/dagRuns/f1/taskInstances/double")
    assert (mapped.status, mapped.body) == (404, {"detail": "Task instance is mapped, add the map_index value to the URL"})
    assert api.get("/api/v2/dags/fanout/dagRuns/f1/taskInstances/double/2").body["state"] == "success"
    assert api.get("/api/v2/dags/fanout/dagRuns/f1/taskInstances/double/x").status == 422
    assert api.get("/api/v2/dags/fanout/dagRuns/~/taskInstances", query={"map_index": 1}).body["total_entries"] == 1


def test_the_sample_trigger_event_creates_one_run_and_its_redelivery_conflicts(api, store):
    event = json.loads((Path(__file__).resolve().parents[3] / "events" / "api" / "trigger_dag_run.json").read_text())
    first = api.handler.handler(event, lambda_context("api"))
    again = api.handler.handler(event, lambda_context("api"))
    assert (first["statusCode"], again["statusCode"]) == (200, 409)
    assert store.get_run("etl", "manual__from_the_sample_event").conf == {"n": 2}


def test_list_mapped_instances_of_a_mapped_task(api, store):
    _trigger(api, "fanout", dag_run_id="f1")
    for index in range(3):
        store.transition_ti(TIKey("fanout", "f1", "double", index), expected=[None], state=TaskInstanceState.SUCCESS)
    mapped = api.get("/api/v2/dags/fanout/dagRuns/f1/taskInstances/double/listMapped", query={"order_by": "-map_index"})
    assert mapped.status == 200 and [t["map_index"] for t in mapped.body["task_instances"]] == [2, 1, 0]
    _trigger(api, dag_run_id="r1")
    not_mapped = api.get("/api/v2/dags/etl/dagRuns/r1/taskInstances/extract/listMapped")
    assert (not_mapped.status, not_mapped.body) == (404, {"detail": "Task id extract is not mapped"})


def test_dag_stats_count_runs_by_state(api, store):
    _trigger(api, dag_run_id="a")
    _trigger(api, dag_run_id="b")
    answer = api.get("/api/v2/dagStats", query={"dag_ids": ["etl", "fanout"]})
    assert answer.status == 200 and answer.body["total_entries"] == 2
    etl, fanout = answer.body["dags"]
    assert etl == {"dag_id": "etl", "dag_display_name": "etl", "stats": [
        {"state": "queued", "count": 2}, {"state": "running", "count": 0}, {"state": "success", "count": 0},
        {"state": "failed", "count": 0}]}
    assert fanout["dag_display_name"] == "Fan out" and sum(s["count"] for s in fanout["stats"]) == 0
    assert api.get("/api/v2/dagStats").body["total_entries"] == 3


def test_batch_list_takes_its_filters_in_a_body(api):
    _trigger(api, dag_run_id="a", conf={"n": 7})
    _trigger(api, dag_run_id="b")
    _trigger(api, "reporting", dag_run_id="c")
    every = api("POST", "/api/v2/dags/~/dagRuns/list", body={"dag_ids": ["etl", "reporting"], "order_by": "-dag_run_id",
                                                            "page_limit": 2})
    assert every.status == 200 and every.body["total_entries"] == 3
    assert [r["dag_run_id"] for r in every.body["dag_runs"]] == ["c", "b"]
    assert api("POST", "/api/v2/dags/~/dagRuns/list", body={"dag_ids": ["reporting"]}).body["total_entries"] == 1
    assert api("POST", "/api/v2/dags/etl/dagRuns/list", body={"conf_contains": '"n": 7'}).body["total_entries"] == 1
    assert api("POST", "/api/v2/dags/etl/dagRuns/list", body={"states": ["queued", None]}).body["total_entries"] == 2
    assert api("POST", "/api/v2/dags/etl/dagRuns/list", body={"run_after_gte": "2999-01-01T00:00:00"}
               ).body["total_entries"] == 0
    assert api("POST", "/api/v2/dags/etl/dagRuns/list", body={"states": ["nope"]}).status == 422
    assert api("POST", "/api/v2/dags/etl/dagRuns/list", body={"page_limit": -1}).status == 422
    assert api("POST", "/api/v2/dags/etl/dagRuns/list", body={"bogus": 1}).status == 422
    assert api("POST", "/api/v2/dags/nope/dagRuns/list", body={}).status == 404


def test_dependencies_say_why_an_instance_is_not_queued(api, store):
    _trigger(api, dag_run_id="r1")
    queued_run = api.get("/api/v2/dags/etl/dagRuns/r1/taskInstances/extract/dependencies")
    assert [d["name"] for d in queued_run.body["dependencies"]] == ["Dagrun Running"]
    store.set_run_state("etl", "r1", expected=[DagRunState.QUEUED], state=DagRunState.RUNNING,
                        now=dt.datetime.now(dt.UTC))
    store.transition_ti(TIKey("etl", "r1", "extract"), expected=[None], state=TaskInstanceState.QUEUED)
    waiting = api.get("/api/v2/dags/etl/dagRuns/r1/taskInstances/load/dependencies")
    assert waiting.status == 200
    assert [d["name"] for d in waiting.body["dependencies"]] == ["Trigger Rule"]
    assert waiting.body["dependencies"][0]["reason"].startswith("Task's trigger rule 'all_success' requires")
    store.transition_ti(TIKey("etl", "r1", "extract"), expected=[TaskInstanceState.QUEUED],
                        state=TaskInstanceState.SUCCESS)
    done = api.get("/api/v2/dags/etl/dagRuns/r1/taskInstances/extract/dependencies")
    assert done.body == {"dependencies": [{"name": "Task Instance State",
                                           "reason": "Task is in the 'success' state."}]}
    assert api.get("/api/v2/dags/etl/dagRuns/r1/taskInstances/nope/dependencies").status == 404
    assert api.get("/api/v2/dags/etl/dagRuns/nope/taskInstances/load/dependencies").status == 404
    _trigger(api, "fanout", dag_run_id="f1")
    store.transition_ti(TIKey("fanout", "f1", "double", 0), expected=[None], state=TaskInstanceState.RUNNING)
    mapped = api.get("/api/v2/dags/fanout/dagRuns/f1/taskInstances/double/0/dependencies")
    assert [d["reason"] for d in mapped.body["dependencies"]] == ["Task's DAG 'fanout' is paused.",
                                                                  "Task is in the 'running' state."]


def test_a_dag_whose_file_has_import_errors_cannot_be_triggered(api, store):
    etl = example_dags()[0]
    doc = serialize_dag(etl, relative_fileloc="etl.py", file_hash="h2")
    register_parsed_file(store, ParsedFile(relative_path="etl.py", file_hash="h2", dags=[doc], import_errors=[
        ImportErrorRecord(filename="etl.py", lineno=9, message="a second DAG in etl.py failed", stacktrace="")]),
        now=NOW)
    refused = _trigger(api)
    assert (refused.status, refused.body) == (
        400, {"detail": "DAG with dag_id: 'etl' has import errors and cannot be triggered"})
    assert api.get("/api/v2/dags/etl").body["has_import_errors"] is True
    assert api.get("/api/v2/dags/etl/details").body["has_import_errors"] is True
    listed = api.get("/api/v2/dags", query={"has_import_errors": "true"}).body["dags"]
    assert [(d["dag_id"], d["has_import_errors"]) for d in listed] == [("etl", True)]
