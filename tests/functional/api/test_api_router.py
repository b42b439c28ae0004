"""The router: Airflow's error bodies, 404/405/422/500, pagination bounds, path decoding, and a fuzz of query
parameters that must never crash the handler."""

from __future__ import annotations

import os
import random
import re
import string
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest
import yaml

from airflow.sdk import DAG
from tests.functional.api.conftest import NOW, START
from updraft.api.openapi import NOT_IN_AIRFLOW
from updraft.api.routes import all_routes
from updraft.model.parse_results import ParsedFile
from updraft.scheduling.commands.dag_registration import register_parsed_file
from updraft.serialization import serialize_dag

ROUTES_TO_FUZZ = ["/api/v2/dags", "/api/v2/dags/~/dagRuns", "/api/v2/dags/etl/dagRuns",
                  "/api/v2/dags/~/dagRuns/~/taskInstances", "/api/v2/pools", "/api/v2/importErrors",
                  "/api/v2/dagTags", "/api/v2/dags/etl/tasks", "/api/v2/dags/etl/details", "/api/v2/version",
                  "/api/v2/monitor/health"]
PARAMS = ["limit", "offset", "order_by", "paused", "tags", "dag_id_pattern", "state", "run_type",
          "logical_date_gte", "start_date_lt", "exclude_stale", "has_import_errors", "last_dag_run_state",
          "try_number", "map_index", "pool_name_pattern", "filename_pattern", "task_id", "tags_match_mode",
          "update_mask", "cursor", "unknown"]
VALUES = ["x" * 300, "", "0", "-1", "1", "50", "101", "99999999999999999999", "true", "false", "yes", "maybe", "~",
          "%", "_", "a|b", "-dag_id", "dag_id", "-", "2024-01-01", "2024-01-01T00:00:00+0000", "2024-13-45",
          "running", "no_status", "\x00", "🙂", "' OR 1=1 --", "null", "[]", "{}"]


@pytest.mark.slow
def test_unknown_api_route_is_airflow_s_404(api):
    answer = api.get("/api/v2/nothing-here")
    assert answer.status == 404
    assert answer.body["error"] == "API route not found"
    assert answer.headers["Content-Type"] == "application/json"


def test_a_route_asked_with_another_method_is_405(api):
    answer = api("PUT", "/api/v2/dags/etl")
    assert (answer.status, answer.body) == (405, {"detail": "Method Not Allowed"})
    assert answer.headers["Allow"] == "DELETE, GET, PATCH"  # DELETE /dags/{dag_id} is served since issue 13
    assert api("DELETE", "/api/v2/version").status == 405


@pytest.mark.slow
def test_malformed_query_parameters_are_422_with_pydantic_s_shape(api):
    answer = api.get("/api/v2/dags", query={"limit": "many", "offset": "-3", "paused": "maybe"})
    assert answer.status == 422
    assert answer.body == {"detail": [
        {"type": "int_parsing", "loc": ["query", "limit"],
         "msg": "Input should be a valid integer, unable to parse string as an integer", "input": "many"},
        {"type": "greater_than_equal", "loc": ["query", "offset"],
         "msg": "Input should be greater than or equal to 0", "input": "-3"},
        {"type": "bool_parsing", "loc": ["query", "paused"],
         "msg": "Input should be a valid boolean, unable to interpret input", "input": "maybe"},
    ]}


@pytest.mark.slow
def test_limit_defaults_to_50_and_is_clamped_to_100(api, store):
    for i in range(120):
        with DAG(f"many_{i:03d}", schedule=None, start_date=START) as dag:
            pass
        doc = serialize_dag(dag, relative_fileloc=f"many_{i:03d}.py", file_hash="h")
        register_parsed_file(store, ParsedFile(relative_path=f"many_{i:03d}.py", file_hash="h", dags=[doc]), now=NOW)
    default = api.get("/api/v2/dags")
    assert len(default.body["dags"]) == 50 and default.body["total_entries"] == 123
    clamped = api.get("/api/v2/dags", query={"limit": 1000, "offset": 100})
    assert len(clamped.body["dags"]) == 23 and clamped.body["total_entries"] == 123
    assert len(api.get("/api/v2/dags", query={"limit": 1000}).body["dags"]) == 100


def test_an_unknown_order_by_is_airflow_s_400(api):
    answer = api.get("/api/v2/dags", query={"order_by": "secret_column"})
    assert answer.status == 400
    assert answer.body == {"detail": "Ordering with 'secret_column' is disallowed or the attribute does not "
                                     "exist on the model"}


def test_path_parameters_are_percent_decoded(api):
    run_id = "manual__2024-02-01T00:00:00+00:00"
    created = api("POST", "/api/v2/dags/etl/dagRuns", body={"dag_run_id": run_id, "logical_date": None})
    assert created.status == 200
    encoded = run_id.replace(":", "%3A").replace("+", "%2B")
    answer = api.get(f"/api/v2/dags/etl/dagRuns/{encoded}")
    assert (answer.status, answer.body["dag_run_id"]) == (200, run_id)


def test_a_path_segment_powertools_pattern_refuses_still_reaches_its_route(api):
    """A run id may hold characters outside Powertools' segment pattern (a double quote, a backtick)."""
    answer = api.get('/api/v2/dags/etl/dagRuns/a"b`c')
    assert (answer.status, answer.body) == (
        404, {"detail": 'The DagRun with dag_id: `etl` and run_id: `a"b`c` was not found'})


def test_an_unexpected_failure_is_a_logged_500_and_counted(api, monkeypatch, capsys, caplog):
    def boom(*_args, **_kwargs):
        raise RuntimeError("the table is on fire")

    monkeypatch.setattr("updraft.store.dynamo.DynamoStore.list_dags", boom)
    answer = api.get("/api/v2/dags")
    assert (answer.status, answer.body) == (500, {"detail": "Internal Server Error"})
    (record,) = [r for r in caplog.records if r.levelname == "ERROR"]
    assert record.getMessage() == "API request failed: GET /api/v2/dags"
    assert "the table is on fire" in str(record.exc_info[1])
    assert '"Api5xx":[1.0]' in capsys.readouterr().out


def test_version_and_health(api):
    assert api.get("/api/v2/version").body == {"version": "3.3.2", "git_version": "updraft-0.1.0"}
    assert api.get("/api/v2/monitor/health").body["metadatabase"] == {"status": "healthy"}


def test_tokens_are_issued_in_local_mode_only(api, monkeypatch):
    refused = api("POST", "/auth/token", body={"username": "admin", "password": "admin"})
    assert refused.status == 403 and "IAM" in refused.body["detail"]
    monkeypatch.setenv("UPDRAFT_LOCAL_COMPUTE", "/tmp/compute.sock")
    monkeypatch.setattr("updraft.services._shared", None)
    issued = api("POST", "/auth/token", body={"username": "admin", "password": "admin"})
    assert issued.status == 201 and issued.body["access_token"].count(".") == 2
    assert api.get("/auth/token").status == 201
    # Every caller is admin: the token (or any other) is accepted by every route.
    listed = api.get("/api/v2/dags", headers={"Authorization": f"Bearer {issued.body['access_token']}"})
    assert listed.status == 200


@pytest.mark.slow
@pytest.mark.parametrize("seed_value", range(3))
def test_fuzzed_query_parameters_never_crash_the_handler(api, seed_value):
    rng = random.Random(seed_value)
    for _ in range(60):
        path = rng.choice(ROUTES_TO_FUZZ)
        query = [(rng.choice(PARAMS), rng.choice([*VALUES, "".join(rng.choices(string.printable, k=8))]))
                 for _ in range(rng.randint(1, 4))]
        answer = api.get(path, query=query)
        assert answer.status in (200, 400, 404, 422), (path, query, answer.status, answer.body)
        assert answer.headers["Content-Type"] == "application/json"


@pytest.mark.parametrize("raw", ["", "not json", "[1, 2]", '"text"', "{", '{"is_paused": "yes"}',
                                 '{"is_paused": true, "extra": 1}', "null", '{"is_paused": null}'])
def test_malformed_bodies_are_422_never_500(api, raw):
    answer = api("PATCH", "/api/v2/dags/etl", raw_body=raw)
    assert answer.status == 422, answer.body
    assert all({"type", "loc", "msg", "input"} <= set(issue) for issue in answer.body["detail"])


def test_the_resolver_is_imported_on_the_first_request_not_at_cold_import():
    """Powertools' resolver costs ~100 ms of import: Lambda's init phase should not pay it before a request."""
    root = Path(__file__).resolve().parents[3]
    code = ("import sys, functions.api.handler as h\n"
            "print('aws_lambda_powertools.event_handler.api_gateway' in sys.modules, "
            "'updraft.api.app' in sys.modules)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(root / "shared")]),
           "AWS_REGION": "us-east-1", "UPDRAFT_TABLE": "t"}
    out = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True,
                         check=True, timeout=120).stdout.split()
    assert out == ["False", "False"]


@pytest.mark.slow
def test_every_served_api_route_is_one_of_airflow_s():
    """Same method and path template as Airflow 3.3.2's OpenAPI document (the contract), for every route but those
    listed, each with its reason, in ``NOT_IN_AIRFLOW``."""
    spec = Path("/work/shared/notes/airflow-rest-api-v2.openapi.yaml")
    if not spec.exists():
        pytest.skip("Airflow's OpenAPI document is not on this machine")
    paths = yaml.safe_load(spec.read_text())["paths"]
    airflow = {(method.upper(), path) for path, item in paths.items() for method in item}
    served = {(r.method, r.path) for r in all_routes() if r.path.startswith("/api/v2/")}
    assert served - airflow - set(NOT_IN_AIRFLOW) == set()
    assert len(served) >= 25


BODY_ROUTES = [("PATCH", "/api/v2/dags/etl"), ("PATCH", "/api/v2/dags"), ("POST", "/api/v2/dags/etl/dagRuns"),
               ("POST", "/api/v2/pools"), ("PATCH", "/api/v2/pools/default_pool"),
               ("POST", "/api/v2/dags/~/dagRuns/list")]
BODY_FIELDS = ["is_paused", "dag_run_id", "logical_date", "conf", "note", "name", "slots", "description",
               "include_deferred", "pool", "team_name", "dag_ids", "states", "page_limit", "page_offset",
               "order_by", "run_after_gte", "duration_lt", "conf_contains", "unknown"]
BODY_VALUES = ["r" * 300, "a/../b", "line\nbreak", {"big": "y" * 400_000}, None, True, False, 0, -1, 2**70, 10**40, 1.5, "", "x", "2024-01-01", "2024-01-01T00:00:00",
               "2024-01-01T00:00:00+00:00", "not a date", [], [None], ["queued"], [1, 2], {}, {"n": "x"},
               {"n": 3}, "default_pool", "-dag_run_id"]


@pytest.mark.parametrize("seed_value", range(3))
def test_fuzzed_bodies_never_crash_the_handler(api, seed_value):
    rng = random.Random(seed_value)
    for _ in range(40):
        method, path = rng.choice(BODY_ROUTES)
        body = {rng.choice(BODY_FIELDS): rng.choice(BODY_VALUES) for _ in range(rng.randint(0, 4))}
        answer = api(method, path, body=body)
        assert answer.status in (200, 201, 400, 404, 409, 422), (method, path, body, answer.status, answer.body)


def test_ids_longer_than_airflow_s_or_a_key_s_are_422_not_a_store_failure(api):
    too_long = api.get("/api/v2/dags/" + "d" * 251)
    assert too_long.status == 422 and too_long.body["detail"][0]["type"] == "string_too_long"
    assert too_long.body["detail"][0]["loc"] == ["path", "dag_id"]
    wide = api.get("/api/v2/dags/etl/dagRuns/" + "\U0001f600" * 245)  # 245 characters, 980 bytes of UTF-8
    assert wide.status == 422
    assert api.get("/api/v2/pools/" + "p" * 256).status == 404  # Airflow's pool names go up to 256
    assert api("POST", "/api/v2/pools", body={"name": "p" * 257, "slots": 1}).status == 422
    assert api("POST", "/api/v2/pools", body={"name": "p", "slots": 10**40}).body["detail"][0]["type"] == \
        "less_than_equal"
    assert api("POST", "/api/v2/pools", body={"name": "", "slots": 1}).status == 400
    assert api("POST", "/api/v2/dags/etl/dagRuns", body={"logical_date": None, "dag_run_id": "r" * 251}
               ).status == 422
    huge = api("POST", "/api/v2/dags/etl/dagRuns", body={"logical_date": None, "conf": {"x": "y" * 400_000}})
    assert huge.status == 400 and "conf is larger" in huge.body["detail"]


SEGMENTS = ["etl", "~", "nope", "\x00", "a/b", "", "-1", "0", "99999999999999999999", "r" * 300, "\U0001f600" * 245, "a b", "%00",
            "..", "%2F", "default_pool", "extract", "return_value", "1.5", "x" * 256]


@pytest.mark.slow
@pytest.mark.parametrize("seed_value", range(2))
def test_every_route_with_fuzzed_path_parameters_never_crashes(api, seed_value):
    rng = random.Random(seed_value)
    for route in all_routes():
        for _ in range(3):
            path = re.sub(r"\{\w+\}", lambda _m: quote(rng.choice(SEGMENTS), safe="~"), route.path)
            answer = api(route.method, path, body=rng.choice([None, {}, {"is_paused": True}, {"logical_date": None}]))
            assert answer.status < 500, (route.method, path, answer.status, answer.body)
