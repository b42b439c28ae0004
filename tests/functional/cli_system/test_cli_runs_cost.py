"""`updraft runs cost DAG RUN_ID` and the cost column of `updraft runs list`, against a running system: the tries'
usage is recorded by their end writes (``finish_try``), as a worker records it."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from tests.functional.cli_system.cli_helpers import chain_dag, invoke, run_to_end, utcnow
from updraft.cost.prices import price_table
from updraft.model.states import TaskInstanceState
from updraft.model.usage import Usage
from updraft.scheduling.commands.triggering import trigger_dag
from updraft.scheduling.try_lifecycle import TryResult

pytestmark = pytest.mark.slow

PRICES = price_table("us-east-1")


def _metered(item) -> TryResult:
    """Each try used 2 s of a 1 GB Lambda, 3 write units and 1 read unit."""
    return TryResult(TaskInstanceState.SUCCESS, usage=Usage(try_number=item.try_number, seconds=2, lambda_requests=1,
                                                            lambda_gb_s=2, dynamodb_requests=4,
                                                            dynamodb_write_units=3, dynamodb_read_units=1))


@pytest.fixture
def costed(local_system):
    local_system.add_dags(chain_dag("chain", schedule=None))
    trigger_dag(local_system.store, "chain", now=utcnow(), run_id="metered",
                logical_date=dt.datetime(2024, 1, 1, tzinfo=dt.UTC))
    run_to_end(local_system, "chain", "metered", outcome=_metered)
    return local_system


def test_runs_cost_prints_the_breakdown_in_dollars(costed):
    tries = 3 * (0.20 / 1e6 + 2 * PRICES.lambda_per_gb_second + 3 * 0.625 / 1e6 + 1 * 0.125 / 1e6)
    answer = json.loads(invoke("runs", "cost", "chain", "metered", "-o", "json").stdout)[0]
    assert answer["tries_usd"] == pytest.approx(tries)
    assert [t["task"] for t in answer["tries"]] == ["t0", "t1", "t2"]
    table = invoke("runs", "cost", "chain", "metered")
    assert table.exit_code == 0, table.output
    lines = table.stdout.splitlines()
    assert lines[0].split() == ["service", "|", "quantity", "|", "unit", "|", "usd", "|", "estimated"]
    lambda_compute = next(line for line in lines if line.startswith("Lambda compute ") and "yes" not in line)
    assert f"{3 * 2 * PRICES.lambda_per_gb_second:.8f}" in lambda_compute  # 6 GB-s of the tries
    assert any(line.startswith("total ") and f"{answer['usd']:.8f}" in line for line in lines)
    assert f"Run metered of chain: ${answer['usd']:.6f} (3 tries ${tries:.6f}, scheduling overhead" in table.stdout


def test_runs_list_shows_each_runs_cost(costed):
    trigger_dag(costed.store, "chain", now=utcnow(), run_id="fresh", logical_date=dt.datetime(2024, 1, 2, tzinfo=dt.UTC))
    rows = json.loads(invoke("runs", "list", "chain", "-o", "json").stdout)
    cost = json.loads(invoke("runs", "cost", "chain", "metered", "-o", "json").stdout)[0]["usd"]
    assert {r["run_id"]: r["cost_usd"] for r in rows} == {"fresh": pytest.approx(0.0, abs=1e-4),
                                                          "metered": round(cost, 6)}


def test_runs_cost_of_an_unknown_run(costed):
    result = invoke("runs", "cost", "chain", "nope")
    assert result.exit_code == 1
    assert result.stderr == "Error: DagRun with dag_id: 'chain' and run_id: 'nope' not found\n"
