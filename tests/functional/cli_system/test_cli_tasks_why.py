"""`updraft tasks why`: "why is my task not running?" against a running system, after a real scheduler pass."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from tests.functional.cli_system.cli_helpers import START, chain_dag, invoke, utcnow
from updraft.executors.recording import RecordingExecutor
from updraft.scheduling.commands.triggering import trigger_dag
from updraft.scheduling.scheduler import Scheduler

pytestmark = pytest.mark.slow


def _one_pass(system, *dags, run_id="r"):
    system.add_dags(*dags)
    for dag in dags:
        trigger_dag(system.store, dag.dag_id, now=utcnow(), run_id=run_id, logical_date=START)
    executor = RecordingExecutor()
    Scheduler(system.store, executor, clock=utcnow).run_pass()
    return executor


def _fan(dag_id, n, **dag_kwargs):
    from airflow.sdk import DAG, task

    with DAG(dag_id, schedule=None, start_date=START, **dag_kwargs) as dag:
        for i in range(n):
            task(lambda: None, task_id=f"t{i}")()
    return dag


def test_a_missing_pool_as_a_table(local_system):
    _one_pass(local_system, chain_dag("chain", n=1, schedule=None, pool="nowhere"))
    result = invoke("tasks", "why", "chain", "r", "t0")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split(" | ") == ["dependency          ", "kind        ", "reason"]
    assert lines[2].split(" | ") == ["Pool Slots Available", "pool_missing", "The pool 'nowhere' does not exist"]


def test_max_active_tasks_and_a_trigger_rule_as_json(local_system):
    executor = _one_pass(local_system, _fan("busy", 2, max_active_tasks=1), chain_dag("chain", n=2, schedule=None))
    [waiting] = {"t0", "t1"} - {d.key.task_id for d in executor.dispatched if d.key.dag_id == "busy"}
    rows = json.loads(invoke("tasks", "why", "busy", "r", waiting, "-o", "json").stdout)
    assert rows == [{"dependency": "DAG Run Concurrency", "kind": "max_active_tasks",
                     "reason": "The maximum number of running tasks (1) for this DAG run has been reached"}]
    [rule] = json.loads(invoke("tasks", "why", "chain", "r", "t1", "-o", "json").stdout)
    assert (rule["dependency"], rule["kind"]) == ("Trigger Rule", "dep")
    assert rule["reason"].startswith("Task's trigger rule 'all_success' requires all upstream tasks to have succeeded")


def test_a_full_pool_in_plain(local_system):
    local_system.store.set_pool("tiny", 1)
    local_system.add_dags(chain_dag("pooled", n=1, schedule=None, pool="tiny"))
    for run_id, day in (("a", 0), ("b", 1)):
        trigger_dag(local_system.store, "pooled", now=utcnow(), run_id=run_id,
                    logical_date=START + dt.timedelta(days=day))
    executor = RecordingExecutor()
    Scheduler(local_system.store, executor, clock=utcnow).run_pass()
    [claimed] = executor.dispatched  # one slot: one of the two runs' t0
    waiting = "b" if claimed.key.run_id == "a" else "a"
    result = invoke("tasks", "why", "pooled", waiting, "t0", "-o", "plain")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1].split("  ", 2)[:2] == ["Pool Slots Available", "pool_full"]
    assert result.stdout.rstrip().endswith(
        "Not scheduling since there are 0 open slots in pool tiny and require 1 pool slots")


def test_a_task_that_is_not_waiting_and_an_unknown_task(local_system):
    _one_pass(local_system, chain_dag("chain", n=1, schedule=None))
    rows = json.loads(invoke("tasks", "why", "chain", "r", "t0", "-o", "json").stdout)
    assert rows == [{"dependency": "Task Instance State", "kind": "dep", "reason": "Task is in the 'queued' state."}]
    result = invoke("tasks", "why", "chain", "r", "nope")
    assert (result.exit_code, result.stderr) == (1, "Error: Task nope not found in DAG chain\n")
