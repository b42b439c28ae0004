"""Run ids are validated as Airflow validates them, before anything is written (issue 18).

``../``, ``/`` and newlines were accepted (a log file was written outside its folder) and a 3,000-character id
failed with a raw DynamoDB error.
"""

from __future__ import annotations

import pytest

from airflow.sdk import DAG
from tests.functional.cli_system.cli_helpers import invoke
from tests.functional.scheduling.harness import store_dags
from updraft.model.identifiers import run_id_problem
from updraft.model.records import TIKey
from updraft.runtime.logs import LocalLogSink
from updraft.scheduling.commands.triggering import InvalidRunId, trigger_dag

BAD = ["../../etc/passwd", "a/b", "two\nlines", "x" * 3000, "..", "sp ace", ""]
GOOD = ["manual__2024-01-01T00:00:00+00:00", "scheduled__2024-01-01T00:00:00.123456+00:00", "my_run", "a.b~c:d+e-f",
        "x" * 250]


@pytest.mark.parametrize("run_id", BAD)
def test_bad_run_ids_are_refused(run_id):
    assert run_id_problem(run_id) is not None


@pytest.mark.parametrize("run_id", GOOD)
def test_airflows_own_and_allowed_run_ids_are_accepted(run_id):
    assert run_id_problem(run_id) is None


@pytest.mark.slow
@pytest.mark.parametrize("run_id", BAD[:4])
def test_trigger_refuses_a_bad_run_id_and_creates_nothing(env, run_id):
    store, clock, _scheduler, _executor = env
    store_dags(store, DAG("d", schedule=None), now=clock())
    with pytest.raises(InvalidRunId) as err:
        trigger_dag(store, "d", now=clock(), run_id=run_id)
    assert err.value.status_code == 400
    assert store.list_runs("d") == []


@pytest.mark.parametrize("run_id", ["../x", "a/b", "x" * 300])
def test_the_cli_refuses_a_bad_run_id_in_one_line(run_id):
    result = invoke("dags", "trigger", "d", "--run-id", run_id)
    assert result.exit_code == 2 and result.stderr.startswith("Error: --run-id: ")
    assert len(result.stderr.splitlines()) == 1


@pytest.mark.parametrize(("dag_id", "run_id", "task_id"), [
    ("d", "../../escape", "t"), ("d", "a/b", "t"), ("..", "r", "t"), ("d", "r", "../t"), ("d", "r", "..")])
def test_no_log_path_is_built_from_an_unvalidated_id(tmp_path, dag_id, run_id, task_id):
    sink = LocalLogSink(tmp_path / "logs")
    with pytest.raises(ValueError, match="no log path"):
        sink.write(TIKey(dag_id, run_id, task_id, -1), 1, "text")
    assert not any(p.is_file() for p in tmp_path.rglob("*"))
