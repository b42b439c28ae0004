"""`updraft tasks clear|state`, `runs mark-success|mark-failed` and `dags state` against a running system: a
failed task is cleared from the CLI and reruns to success."""

from __future__ import annotations

import datetime as dt

import pytest
from click.testing import CliRunner

from tests.functional.cli_system.cli_helpers import chain_dag, invoke, outcome_failing, run_to_end, utcnow
from updraft.cli.app import cli
from updraft.model.records import TIKey
from updraft.model.states import DagRunState, TaskInstanceState
from updraft.scheduling.commands.triggering import trigger_dag

pytestmark = pytest.mark.slow

S = TaskInstanceState


def _answering(answer: str, *args: str):
    return CliRunner().invoke(cli, list(args), input=answer, catch_exceptions=False)


def test_clear_lists_asks_then_the_failed_task_and_its_downstream_rerun_to_success(local_system):
    local_system.add_dags(chain_dag("chain", schedule=None))
    trigger_dag(local_system.store, "chain", now=utcnow(), run_id="r1",
                logical_date=dt.datetime(2024, 1, 1, tzinfo=dt.UTC))
    assert run_to_end(local_system, "chain", "r1", outcome_failing("t1")).state == DagRunState.FAILED
    assert invoke("dags", "state", "chain", "r1").stdout == "failed\n"
    assert invoke("tasks", "state", "chain", "t2", "r1").stdout == "upstream_failed\n"

    cancelled = _answering("n\n", "tasks", "clear", "chain", "-t", "1$", "--downstream", "--only-failed")
    assert cancelled.exit_code == 0, cancelled.output
    assert "t1" in cancelled.stdout and "t2" in cancelled.stdout and "t0" not in cancelled.stdout.split("?")[0]
    assert cancelled.stdout.endswith("Cancelled, nothing was cleared.\n")
    assert local_system.store.get_ti(TIKey("chain", "r1", "t1")).state == S.FAILED

    cleared = _answering("y\n", "tasks", "clear", "chain", "-t", "1$", "--downstream", "--only-failed")
    assert cleared.exit_code == 0 and cleared.stdout.endswith("Cleared 2 task instances.\n"), cleared.output
    assert invoke("dags", "state", "chain", "r1").stdout == "queued\n"
    assert invoke("tasks", "state", "chain", "t1", "r1").stdout == "None\n"
    assert run_to_end(local_system, "chain", "r1").state == DagRunState.SUCCESS
    t1 = local_system.store.get_ti(TIKey("chain", "r1", "t1"))
    assert (t1.state, t1.try_number) == (S.SUCCESS, 2)
    assert invoke("tasks", "clear", "chain", "-t", "nothing-like-it", "-y").stdout == (
        "No task matches; nothing was cleared.\n")
    assert invoke("tasks", "clear", "chain", "-f", "-r", "-y").exit_code == 2


def test_mark_a_run_failed_then_successful(local_system):
    local_system.add_dags(chain_dag("chain", schedule=None))
    trigger_dag(local_system.store, "chain", now=utcnow(), run_id="r1",
                logical_date=dt.datetime(2024, 1, 1, tzinfo=dt.UTC))
    failed = invoke("runs", "mark-failed", "chain", "r1")
    assert (failed.exit_code, failed.stdout) == (0, "Run r1 of chain marked failed.\n")
    states = {ti.task_id: ti.state for ti in local_system.store.get_run_tis("chain", "r1")}
    assert states == {"t0": S.SKIPPED, "t1": S.SKIPPED, "t2": S.SKIPPED}
    assert invoke("runs", "mark-success", "chain", "r1").stdout == "Run r1 of chain marked success.\n"
    assert invoke("dags", "state", "chain", "r1").stdout == "success\n"
    missing = invoke("runs", "mark-success", "chain", "nope")
    assert missing.exit_code == 1 and "nope" in missing.stderr
    assert invoke("tasks", "state", "chain", "t9", "r1").exit_code == 1
