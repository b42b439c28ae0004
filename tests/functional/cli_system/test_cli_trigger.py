"""`updraft dags trigger`, with and without --wait, against a running system."""

from __future__ import annotations

import io
import json

import pytest

from tests.functional.cli_system.cli_helpers import (
    BackgroundScheduler,
    chain_dag,
    invoke,
    outcome_failing,
    params_dag,
)
from updraft.cli.progress import wait_for_run
from updraft.model.states import DagRunState

pytestmark = pytest.mark.slow

RUN_KEYS = {"conf", "dag_id", "dag_run_id", "data_interval_start", "data_interval_end", "end_date", "logical_date",
            "run_after", "run_type", "start_date", "state"}


def test_trigger_creates_a_queued_manual_run_and_prints_it(local_system):
    local_system.add_dags(params_dag())
    result = invoke("dags", "trigger", "with_params", "--conf", '{"n": 5}', "--run-id", "my_run",
                    "--logical-date", "2024-03-01T10:00:00", "-o", "json")
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.stdout)
    assert set(row) == RUN_KEYS
    assert row["dag_run_id"] == "my_run" and row["conf"] == {"n": 5} and row["state"] == "queued"
    assert row["run_type"] == "manual" and row["logical_date"] == "2024-03-01T10:00:00+00:00"
    stored = local_system.store.get_run("with_params", "my_run")
    assert stored.state == DagRunState.QUEUED and stored.conf == {"n": 5}


def test_trigger_default_run_id_and_table(local_system):
    local_system.add_dags(params_dag())
    result = invoke("dags", "trigger", "with_params")
    assert result.exit_code == 0, result.output
    [run] = local_system.store.list_runs("with_params")
    assert run.run_id.startswith("manual__") and run.conf == {}
    assert run.run_id in result.stdout and result.stdout.splitlines()[0].startswith("conf")


def test_trigger_of_a_paused_dag_warns(local_system):
    local_system.add_dags(params_dag(), unpause=False)
    result = invoke("dags", "trigger", "with_params")
    assert result.exit_code == 0
    assert "paused" in result.stderr and "updraft dags unpause with_params" in result.stderr


@pytest.mark.parametrize(("conf", "message"), [
    ("{not json", "Error: --conf is not valid JSON"),
    ("[1, 2]", "Error: --conf must be a JSON object"),
])
def test_bad_conf_is_a_usage_error(local_system, conf, message):
    local_system.add_dags(params_dag())
    result = invoke("dags", "trigger", "with_params", "--conf", conf)
    assert result.exit_code == 2 and result.stderr.startswith(message) and len(result.stderr.splitlines()) == 1
    assert local_system.store.list_runs("with_params") == []


def test_conf_that_fails_the_params_is_one_line(local_system):
    local_system.add_dags(params_dag())
    result = invoke("dags", "trigger", "with_params", "--conf", '{"n": "five"}')
    assert result.exit_code == 1
    [line] = result.stderr.splitlines()
    assert line.startswith("Error: Invalid input for param n")
    assert local_system.store.list_runs("with_params") == []


def test_a_second_run_with_the_same_id_is_refused(local_system):
    local_system.add_dags(params_dag())
    assert invoke("dags", "trigger", "with_params", "-r", "once").exit_code == 0
    again = invoke("dags", "trigger", "with_params", "-r", "once")
    assert again.exit_code == 1
    assert again.stderr == "Error: A DAG run with run_id 'once' already exists for DAG 'with_params'\n"


def test_bad_logical_date(local_system):
    local_system.add_dags(params_dag())
    result = invoke("dags", "trigger", "with_params", "--logical-date", "someday")
    assert result.exit_code == 2 and result.stderr.startswith("Error: --logical-date 'someday' is not a date")


def test_wait_follows_the_run_to_success(local_system):
    local_system.add_dags(chain_dag("chain", n=3, schedule=None))
    with BackgroundScheduler(local_system.services.config, outcome_failing()):
        result = invoke("dags", "trigger", "chain", "--wait", "--timeout", "60", "--poll-interval", "0.02")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[-1].startswith("DAG run manual__") and ": success in " in lines[-1]
    changes = [line.split() for line in lines if line[:2].isdigit()]
    # Every task was seen finishing, each change once, in the order the chain ran.
    finished = [c[1] for c in changes if c[2] == "success"]
    assert finished == ["t0", "t1", "t2"]
    assert len(changes) == len({tuple(c[1:]) for c in changes})
    [run] = local_system.store.list_runs("chain")
    assert run.state == DagRunState.SUCCESS


def test_wait_exits_1_when_the_run_fails(local_system):
    local_system.add_dags(chain_dag("chain", n=3, schedule=None))
    with BackgroundScheduler(local_system.services.config, outcome_failing("t1")):
        result = invoke("dags", "trigger", "chain", "--wait", "--timeout", "60", "--poll-interval", "0.02")
    assert result.exit_code == 1, result.output
    assert ": failed in " in result.stdout.splitlines()[-1]
    assert any(line.split()[1:3] == ["t1", "failed"] for line in result.stdout.splitlines() if line[:2].isdigit())
    assert any(line.split()[1:3] == ["t2", "upstream_failed"] for line in result.stdout.splitlines()
               if line[:2].isdigit())


def test_wait_with_json_keeps_stdout_for_the_finished_run(local_system):
    local_system.add_dags(chain_dag("chain", n=2, schedule=None))
    with BackgroundScheduler(local_system.services.config, outcome_failing()):
        result = invoke("dags", "trigger", "chain", "--wait", "--timeout", "60", "--poll-interval", "0.02", "-o", "json")
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.stdout)
    assert set(row) == RUN_KEYS and row["state"] == "success" and row["end_date"] is not None
    assert "t1" in result.stderr  # the progress went to stderr


def test_on_a_terminal_one_summary_line_is_redrawn(local_system):
    local_system.add_dags(chain_dag("chain", n=2, schedule=None))
    run_id = json.loads(invoke("dags", "trigger", "chain", "-o", "json").stdout)[0]["dag_run_id"]
    out = io.StringIO()
    with BackgroundScheduler(local_system.services.config, outcome_failing("t0")):
        final = wait_for_run(local_system.store, "chain", run_id, stream=out, tty=True, poll_interval=0.02,
                             timeout=60)
    assert final.state == DagRunState.FAILED
    text = out.getvalue()
    assert text.count("\r\033[K") >= 2 and text.endswith("\n")
    assert text.rstrip("\n").rsplit("\r\033[K", 1)[1].startswith(f"{run_id}: failed  [")
    # A failure is kept as its own line above the summary; successes only count in it.
    kept = [part for part in text.split("\r\033[K") if part.endswith("\n") and " t0 " in part]
    assert kept and "failed" in kept[0]
    assert "upstream_failed 1" in text


def test_wait_gives_up_after_the_timeout_and_the_run_goes_on(local_system):
    local_system.add_dags(chain_dag("chain", n=1, schedule=None))  # nothing schedules it: it stays queued
    result = invoke("dags", "trigger", "chain", "--wait", "--timeout", "0.2", "--poll-interval", "0.02")
    assert result.exit_code == 3
    [line] = result.stderr.splitlines()
    assert line.startswith("Error: stopped waiting: run manual__") and line.endswith("is still queued after 0.2 s")
    [run] = local_system.store.list_runs("chain")
    assert run.state == DagRunState.QUEUED


def test_a_failed_nudge_only_warns_the_run_exists(local_system, monkeypatch):
    from updraft.services import Services

    def broken(self, dag_id, run_id):
        raise ConnectionError("scheduler unreachable")

    monkeypatch.setattr(Services, "nudge_scheduler", broken)
    local_system.add_dags(params_dag())
    result = invoke("dags", "trigger", "with_params", "-r", "r1")
    assert result.exit_code == 0
    assert "could not nudge the scheduler (ConnectionError: scheduler unreachable)" in result.stderr
    assert local_system.store.get_run("with_params", "r1") is not None


def test_trigger_nudges_the_scheduler_for_the_new_run(local_system, monkeypatch):
    from updraft.services import Services

    nudged = []
    monkeypatch.setattr(Services, "nudge_scheduler", lambda self, dag_id, run_id: nudged.append((dag_id, run_id)))
    local_system.add_dags(params_dag())
    assert invoke("dags", "trigger", "with_params", "-r", "r1").exit_code == 0
    assert nudged == [("with_params", "r1")]
