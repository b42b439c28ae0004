"""`updraft runs list`, `dags list-runs`, `tasks states` and `tasks logs` against a running system."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from tests.functional.cli_system.cli_helpers import chain_dag, invoke, mapped_dag, run_to_end, utcnow
from updraft.model.records import TIKey
from updraft.model.states import TaskInstanceState
from updraft.scheduling.commands.triggering import trigger_dag
from updraft.scheduling.try_lifecycle import TryResult

pytestmark = pytest.mark.slow

RUN_COLUMNS = ["dag_id", "run_id", "state", "run_type", "logical_date", "start_date", "end_date"]
STATE_COLUMNS = ["task_id", "map_index", "state", "try_number", "start_date", "end_date"]


def _trigger(system, dag_id: str, run_id: str, logical: dt.datetime):
    return trigger_dag(system.store, dag_id, now=utcnow(), run_id=run_id, logical_date=logical)


@pytest.fixture
def two_runs(local_system):
    """A finished run and a newer queued one of a three-task chain."""
    local_system.add_dags(chain_dag("chain", schedule=None))
    _trigger(local_system, "chain", "first", dt.datetime(2024, 1, 1, tzinfo=dt.UTC))
    run_to_end(local_system, "chain", "first")
    _trigger(local_system, "chain", "second", dt.datetime(2024, 1, 2, tzinfo=dt.UTC))
    return local_system


@pytest.mark.parametrize(("command", "columns"), [(("runs", "list"), [*RUN_COLUMNS, "cost_usd"]),
                                                  (("dags", "list-runs"), RUN_COLUMNS)])
def test_runs_list_newest_first_with_airflows_columns(two_runs, command, columns):
    """``runs list`` adds each run's cost; ``dags list-runs`` keeps Airflow's columns exactly."""
    result = invoke(*command, "chain", "-o", "json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [list(r) for r in rows] == [columns, columns]
    assert [(r["run_id"], r["state"], r["run_type"]) for r in rows] == [
        ("second", "queued", "manual"), ("first", "success", "manual")]
    assert rows[1]["logical_date"] == "2024-01-01T00:00:00+00:00" and rows[1]["end_date"] is not None
    assert rows[0]["start_date"] is None


def test_runs_list_filters_and_limits(two_runs):
    only = json.loads(invoke("runs", "list", "chain", "--state", "success", "-o", "json").stdout)
    assert [r["run_id"] for r in only] == ["first"]
    newest = json.loads(invoke("runs", "list", "chain", "--limit", "1", "-o", "json").stdout)
    assert [r["run_id"] for r in newest] == ["second"]
    plain = invoke("runs", "list", "chain", "-o", "plain").stdout.splitlines()
    assert plain[0].split() == [*RUN_COLUMNS, "cost_usd"] and len(plain) == 3


def test_runs_list_of_a_dag_without_runs(local_system):
    local_system.add_dags(chain_dag("quiet", schedule=None))
    result = invoke("runs", "list", "quiet")
    assert result.exit_code == 0 and result.stdout.strip() == "No data found"


@pytest.mark.parametrize("command", ["states", "states-for-dag-run"])
def test_task_states_of_a_finished_and_a_fresh_run(two_runs, command):
    done = json.loads(invoke("tasks", command, "chain", "first", "-o", "json").stdout)
    assert [list(r) for r in done] == [STATE_COLUMNS] * 3
    assert [(r["task_id"], r["map_index"], r["state"], r["try_number"]) for r in done] == [
        ("t0", -1, "success", 1), ("t1", -1, "success", 1), ("t2", -1, "success", 1)]
    assert all(r["start_date"] and r["end_date"] for r in done)
    # Not yet examined by the scheduler: every task is listed, with no state, as Airflow shows them.
    fresh = json.loads(invoke("tasks", "states", "chain", "second", "-o", "json").stdout)
    assert [(r["task_id"], r["state"], r["try_number"]) for r in fresh] == [
        ("t0", None, 0), ("t1", None, 0), ("t2", None, 0)]


def test_task_states_of_an_unknown_run(two_runs):
    result = invoke("tasks", "states", "chain", "nope")
    assert result.exit_code == 1
    assert result.stderr == "Error: DagRun with dag_id: 'chain' and run_id: 'nope' not found\n"


def test_mapped_instances_are_listed_by_index(local_system):
    local_system.add_dags(mapped_dag())
    _trigger(local_system, "mapped", "m", dt.datetime(2024, 1, 1, tzinfo=dt.UTC))
    run_to_end(local_system, "mapped", "m")
    rows = json.loads(invoke("tasks", "states", "mapped", "m", "-o", "json").stdout)
    assert [(r["task_id"], r["map_index"], r["state"]) for r in rows] == [
        ("each", 0, "success"), ("each", 1, "success"), ("each", 2, "success")]


def _fail_first_try(item) -> TryResult:
    return TryResult(TaskInstanceState.FAILED if item.try_number == 1 else TaskInstanceState.SUCCESS)


@pytest.fixture
def retried(local_system):
    """t0 failed its first try and succeeded on the second; each try wrote its log, as the worker does."""
    local_system.add_dags(chain_dag("chain", n=1, schedule=None, retries=1, retry_delay=dt.timedelta(0)))
    _trigger(local_system, "chain", "r", dt.datetime(2024, 1, 1, tzinfo=dt.UTC))
    run_to_end(local_system, "chain", "r", outcome=_fail_first_try)
    key = TIKey("chain", "r", "t0")
    assert local_system.store.get_ti(key).try_number == 2
    sink = local_system.services.log_sink
    sink.write(key, 1, "try one\nTraceback: boom\n")
    sink.write(key, 2, "try two\nDone.\n")
    return local_system


def test_logs_default_to_the_latest_try(retried):
    result = invoke("tasks", "logs", "chain", "r", "t0")
    assert result.exit_code == 0, result.output
    assert result.stdout == "try two\nDone.\n"


def test_logs_of_an_earlier_try(retried):
    result = invoke("tasks", "logs", "chain", "r", "t0", "--try", "1")
    assert result.exit_code == 0 and result.stdout == "try one\nTraceback: boom\n"


def test_logs_errors_are_one_line(retried):
    cases = {
        ("t0", "--try", "3"): "Error: t0 of run r has 2 tries; there is no try 3\n",
        ("nope",): "Error: Task nope not found in DAG chain\n",
    }
    for args, message in cases.items():
        result = invoke("tasks", "logs", "chain", "r", *args)
        assert (result.exit_code, result.stderr) == (1, message)


def test_a_try_without_a_log(local_system):
    local_system.add_dags(chain_dag("chain", n=1, schedule=None))
    _trigger(local_system, "chain", "r", dt.datetime(2024, 1, 1, tzinfo=dt.UTC))
    result = invoke("tasks", "logs", "chain", "r", "t0")
    assert (result.exit_code, result.stderr) == (1, "Error: t0 of run r has not started a try yet\n")
    run_to_end(local_system, "chain", "r")
    result = invoke("tasks", "logs", "chain", "r", "t0")
    assert (result.exit_code, result.stderr) == (1, "Error: no log for try 1 of t0 in run r\n")


def test_logs_of_a_mapped_task_need_its_index(local_system):
    local_system.add_dags(mapped_dag())
    _trigger(local_system, "mapped", "m", dt.datetime(2024, 1, 1, tzinfo=dt.UTC))
    run_to_end(local_system, "mapped", "m")
    local_system.services.log_sink.write(TIKey("mapped", "m", "each", 2), 1, "third\n")
    result = invoke("tasks", "logs", "mapped", "m", "each")
    assert (result.exit_code, result.stderr) == (1, "Error: each is mapped: choose --map-index from 0..2\n")
    result = invoke("tasks", "logs", "mapped", "m", "each", "--map-index", "2")
    assert result.exit_code == 0 and result.stdout == "third\n"
