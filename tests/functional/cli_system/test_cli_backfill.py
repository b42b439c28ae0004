"""`updraft backfill create|list|pause|unpause|cancel` against a running system, through its REST API."""

from __future__ import annotations

import json

import pytest

from airflow.sdk import DAG, task
from tests.functional.cli_system.cli_helpers import invoke
from tests.functional.scheduling.harness import START

pytestmark = pytest.mark.slow


def _dag() -> DAG:
    with DAG("daily", schedule="@daily", start_date=START) as dag:
        @task
        def work():
            return None

        work()
    return dag


def test_create_list_pause_and_cancel(local_system):
    local_system.add_dags(_dag())
    dry = invoke("backfill", "create", "--dag-id", "daily", "--from-date", "2024-01-01", "--to-date", "2024-01-03",
                 "--run-backwards", "--dry-run", "-o", "json")
    assert dry.exit_code == 0, dry.output
    assert dry.stdout.splitlines()[0] == "Runs to be attempted:"
    assert [r["logical_date"] for r in json.loads("\n".join(dry.stdout.splitlines()[1:]))] == [
        "2024-01-03T00:00:00Z", "2024-01-02T00:00:00Z", "2024-01-01T00:00:00Z"]
    assert local_system.store.list_backfills("daily") == []  # a dry run creates nothing

    created = invoke("backfill", "create", "--dag-id", "daily", "--from-date", "2024-01-01", "--to-date",
                     "2024-01-03", "--max-active-runs", "2", "--dag-run-conf", '{"k": 1}', "-o", "json")
    assert created.exit_code == 0, created.output
    row = json.loads(created.stdout)[0]
    assert {k: row[k] for k in ("dag_id", "state", "max_active_runs", "reprocess_behavior")} == {
        "dag_id": "daily", "state": "running", "max_active_runs": 2, "reprocess_behavior": "none"}
    assert local_system.store.get_backfill(row["id"]).dag_run_conf == {"k": 1}
    again = invoke("backfill", "create", "--dag-id", "daily", "--from-date", "2024-01-01", "--to-date", "2024-01-03")
    assert again.exit_code == 1 and again.stderr == "Error: There is already a running backfill for dag daily\n"

    paused = invoke("backfill", "pause", str(row["id"]), "-o", "json")
    assert json.loads(paused.stdout)[0]["state"] == "paused"
    assert json.loads(invoke("backfill", "unpause", str(row["id"]), "-o", "json").stdout)[0]["state"] == "running"
    cancelled = invoke("backfill", "cancel", str(row["id"]), "-o", "json")
    assert json.loads(cancelled.stdout)[0]["state"] == "completed"
    listed = json.loads(invoke("backfill", "list", "-o", "json").stdout)
    assert [(b["id"], b["state"]) for b in listed] == [(row["id"], "completed")]
    assert json.loads(invoke("backfill", "list", "--dag-id", "daily", "-o", "json").stdout) == listed
    missing = invoke("backfill", "cancel", "999")
    assert (missing.exit_code, missing.stderr) == (1, "Error: Backfill 999 does not exist\n")


def test_bad_options_say_what_is_wrong(local_system):
    local_system.add_dags(_dag())
    conf = invoke("backfill", "create", "--dag-id", "daily", "--from-date", "2024-01-01", "--to-date", "2024-01-02",
                  "--dag-run-conf", "{nope")
    assert conf.exit_code == 2 and "Invalid JSON in --dag-run-conf" in conf.stderr
    reversed_dates = invoke("backfill", "create", "--dag-id", "daily", "--from-date", "2024-01-05", "--to-date",
                            "2024-01-01")
    assert reversed_dates.exit_code == 1 and "must not be after to_date" in reversed_dates.stderr
    unknown = invoke("backfill", "create", "--dag-id", "nope", "--from-date", "2024-01-01", "--to-date", "2024-01-02")
    assert unknown.exit_code == 1 and unknown.stderr == "Error: Could not find dag nope\n"
