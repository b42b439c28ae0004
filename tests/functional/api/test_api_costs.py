"""Updraft's cost routes (``/api/updraft``): a run's tries priced once each, its overhead estimated, a DAG's days,
the environment's idle month; apart from Airflow's /api/v2 and readable by a VIEWER."""

from __future__ import annotations

import datetime as dt

import pytest

from updraft.api.auth.policy import Resource, requirement
from updraft.api.auth.roles import Role
from updraft.cost.prices import price_table
from updraft.cost.runs import daily_costs, scheduling_overhead
from updraft.model.records import TIKey
from updraft.model.states import TaskInstanceState
from updraft.model.usage import Usage
from updraft.scheduling.commands.triggering import trigger_dag

NOW = dt.datetime(2024, 3, 1, tzinfo=dt.UTC)
PRICES = price_table("us-east-1")


def _ended(store, key: TIKey, usage: Usage, *, state=TaskInstanceState.SUCCESS, try_number: int = 1) -> None:
    store.create_ti(key, state=state, fields={"try_number": try_number, "start_date": NOW, "end_date": NOW,
                                              "usage": usage.to_record()})


@pytest.fixture
def run(store):
    run = trigger_dag(store, "etl", now=NOW, run_id="costly")
    key = TIKey("etl", run.run_id, "extract")
    # extract: one try on Lambda, 10 GB-s, 4 write units and 2 read units.
    _ended(store, key, Usage(try_number=1, seconds=10, lambda_requests=1, lambda_gb_s=10, dynamodb_requests=5,
                             dynamodb_write_units=4, dynamodb_read_units=2))
    # load: its first try (kept by the retry) on Fargate; the second try claimed, not ended: its record still
    # holds the first try's usage, which must count once.
    first = Usage(try_number=1, seconds=60, fargate_vcpu_s=30, fargate_gb_s=60, dynamodb_write_units=3)
    load = TIKey("etl", run.run_id, "load")
    _ended(store, load, first, state=TaskInstanceState.UP_FOR_RETRY)
    store.record_try(store.get_ti(load))
    store.apply_ti_change(load, expected=TaskInstanceState.UP_FOR_RETRY, state=TaskInstanceState.QUEUED,
                          fields={"try_number": 2})
    return run


def test_a_runs_cost_is_its_tries_each_once_and_its_estimated_overhead(api, run):
    answer = api.get("/api/updraft/dags/etl/dagRuns/costly/cost")
    assert answer.status == 200
    body = answer.body
    extract = 1 * 0.20 / 1e6 + 10 * PRICES.lambda_per_gb_second + 4 * 0.625 / 1e6 + 2 * 0.125 / 1e6
    load = 30 * PRICES.fargate_per_vcpu_hour / 3600 + 60 * PRICES.fargate_per_gb_hour / 3600 + 3 * 0.625 / 1e6
    assert [(t["task"], t["try_number"]) for t in body["tries"]] == [("extract", 1), ("load", 1)]
    assert body["tries_usd"] == pytest.approx(extract + load)
    overhead = scheduling_overhead([Usage.from_record(t) for t in ({"try_number": 1, "seconds": 10,
                                                                      "lambda_requests": 1, "lambda_gb_s": 10},
                                                                     {"try_number": 1, "seconds": 60})], PRICES)
    assert body["overhead_usd"] == pytest.approx(overhead.usd)
    assert all(line["estimated"] for line in body["overhead"])
    assert body["usd"] == pytest.approx(extract + load + overhead.usd)
    assert body["unmetered_tries"] == 0 and body["prices_date"] and body["region"] == "us-east-1"
    fargate = {line["name"]: line for line in body["lines"]}["Fargate vCPU"]
    assert fargate["quantity"] == 30 and fargate["unit"] == "vCPU-s"


def test_a_try_that_ended_without_a_record_is_counted_unmetered(api, store, run):
    store.create_ti(TIKey("etl", run.run_id, "zombie"), state=TaskInstanceState.FAILED,
                    fields={"try_number": 1, "start_date": NOW})
    assert api.get("/api/updraft/dags/etl/dagRuns/costly/cost").body["unmetered_tries"] == 1


def test_costs_of_several_runs_and_of_a_dag_per_day(api, store, run):
    single = api.get("/api/updraft/dags/etl/dagRuns/costly/cost").body["usd"]
    listed = api.get("/api/updraft/dags/etl/runCosts", query=[("dag_run_id", "costly"), ("dag_run_id", "nope")])
    assert listed.status == 200
    assert listed.body["dag_runs"] == [{"dag_run_id": "costly", "usd": pytest.approx(single), "unmetered_tries": 0}]

    days = api.get("/api/updraft/dags/etl/cost", query={"days": 3})  # the run is from 2024: today's days are 0
    assert days.status == 200 and [d["runs"] for d in days.body["days"]] == [0, 0, 0]
    assert days.body["days"][-1]["date"] == dt.datetime.now(dt.UTC).date().isoformat()
    # The run counts on its day, with its cost.
    per_day = daily_costs(store, "etl", days=2, today=NOW.date(), region="us-east-1")
    assert per_day == [{"date": "2024-02-29", "runs": 0, "usd": 0.0},
                       {"date": "2024-03-01", "runs": 1, "usd": pytest.approx(single)}]
    assert api.get("/api/updraft/dags/etl/cost", query={"days": 32}).status == 400
    assert api.get("/api/updraft/dags/nope/cost").status == 404
    assert api.get("/api/updraft/dags/etl/dagRuns/nope/cost").status == 404


def test_the_environments_idle_month_says_what_makes_it_up(api):
    body = api.get("/api/updraft/cost/idle").body
    names = {line["name"] for line in body["lines"]}
    assert {"KMS key (variables and connections)", "CloudWatch alarms", "Scheduler tick: Lambda requests"} <= names
    assert body["usd_per_month"] == pytest.approx(sum(line["usd"] for line in body["lines"]), abs=1e-4)
    assert 1.5 < body["usd_per_month"] < 10
    assert body["per_gb_month"]["dynamodb"] == PRICES.dynamodb_storage_per_gb_month


def test_the_cost_routes_are_apart_from_airflows_and_a_viewer_reads_them(api):
    for path in ("/api/updraft/dags/{dag_id}/dagRuns/{dag_run_id}/cost", "/api/updraft/dags/{dag_id}/cost"):
        assert requirement("GET", path).resource is Resource.DAG and requirement("GET", path).role is Role.VIEWER
    assert requirement("GET", "/api/updraft/cost/idle").role is Role.VIEWER
    assert requirement("GET", "/api/updraft/other").resource is Resource.UNCLASSIFIED  # fail closed
    assert api.get("/api/v2/dags/etl/dagRuns/costly/cost").status == 404  # not in Airflow's namespace
