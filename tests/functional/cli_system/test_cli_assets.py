"""`updraft assets list|events|materialize` against a running system."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from airflow.sdk import DAG, Asset, task
from tests.functional.cli_system.cli_helpers import invoke
from updraft.scheduling.asset_events import record_asset_event

pytestmark = pytest.mark.slow

START = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


def _dags():
    with DAG("make_raw", schedule=None, start_date=START) as producer:
        @task(outlets=[Asset(uri="s3://bucket/raw", name="raw")])
        def make():
            return None

        make()
    with DAG("use_raw", schedule=Asset.ref(name="raw"), start_date=START) as consumer:
        @task
        def use():
            return None

        use()
    return producer, consumer


def test_list_events_and_materialize(local_system):
    local_system.add_dags(*_dags())
    listed = invoke("assets", "list", "-o", "json")
    assert listed.exit_code == 0, listed.output
    [raw] = json.loads(listed.stdout)
    assert (raw["name"], raw["uri"], raw["scheduled_dags"], raw["last_event"]) == ("raw", "s3://bucket/raw",
                                                                                  "use_raw", "")
    record_asset_event(local_system.store, name="raw", uri="s3://bucket/raw", source="test",
                       timestamp=dt.datetime(2024, 2, 1, tzinfo=dt.UTC), extra={"rows": 2})
    events = json.loads(invoke("assets", "events", "--asset", "raw", "-o", "json").stdout)
    assert [(e["asset"], e["extra"]) for e in events] == [("raw", {"rows": 2})]
    run = json.loads(invoke("assets", "materialize", "raw", "-o", "json").stdout)
    assert run[0]["dag_id"] == "make_raw" and run[0]["run_type"] == "asset_materialization"
    missing = invoke("assets", "materialize", "nope")
    assert (missing.exit_code, missing.stderr) == (1, "Error: Asset nope does not exist\n")
