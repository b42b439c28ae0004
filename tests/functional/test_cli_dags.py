"""`updraft dags ...`: Airflow's command shapes, clean machine-readable output, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from updraft.cli.app import cli

REPO = Path(__file__).resolve().parents[2]

GOOD = """\
from datetime import datetime
from airflow.sdk import DAG
from airflow.providers.standard.operators.empty import EmptyOperator

print("this print must not reach the CLI output")

with DAG(dag_id="{dag_id}", schedule="@daily", start_date=datetime(2024, 1, 1), catchup=True,
         tags=["b", "a"], default_args={{"owner": "data-eng"}}):
    EmptyOperator(task_id="t")
"""

ONCE = """\
from datetime import datetime
from airflow.sdk import DAG

with DAG(dag_id="once", schedule="@once", start_date=datetime(2024, 1, 1)):
    pass
"""

BROKEN = """\
from airflow.sdk import DAG
raise ValueError("no such bucket")
"""


@pytest.fixture
def dags(tmp_path: Path) -> Path:
    folder = tmp_path / "dags"
    folder.mkdir()
    (folder / "zeta.py").write_text(GOOD.format(dag_id="zeta"))
    (folder / "alpha.py").write_text(GOOD.format(dag_id="alpha"))
    (folder / "once.py").write_text(ONCE)
    return folder


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.mark.slow
def test_list_json_is_clean_and_sorted(dags):
    result = run("dags", "list", "--dags-folder", str(dags), "-o", "json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [r["dag_id"] for r in rows] == ["alpha", "once", "zeta"]
    assert set(rows[0]) == {"dag_id", "fileloc", "owners", "is_paused", "tags"}
    assert rows[0]["fileloc"] == str(dags / "alpha.py")
    assert rows[0]["owners"] == "data-eng"
    assert rows[0]["tags"] == ["a", "b"]
    assert "must not reach" not in result.output


def test_list_table_and_plain(dags):
    table = run("dags", "list", "--dags-folder", str(dags))
    assert table.exit_code == 0
    lines = table.stdout.splitlines()
    assert lines[0].split(" | ")[0].strip() == "dag_id"
    assert set(lines[1]) <= {"=", "+"}
    assert lines[2].startswith("alpha ")
    plain = run("dags", "list", "--dags-folder", str(dags), "--output", "plain")
    assert plain.stdout.splitlines()[0].split() == ["dag_id", "fileloc", "owners", "is_paused", "tags"]


def test_list_with_a_broken_file_warns_like_airflow_but_succeeds(dags):
    (dags / "broken.py").write_text(BROKEN)
    result = run("dags", "list", "--dags-folder", str(dags), "-o", "json")
    assert result.exit_code == 0
    assert "Failed to load all files" in result.stderr
    assert len(json.loads(result.stdout)) == 3


def test_list_import_errors(dags):
    clean = run("dags", "list-import-errors", "--dags-folder", str(dags), "-o", "json")
    assert clean.exit_code == 0 and json.loads(clean.stdout) == []

    (dags / "broken.py").write_text(BROKEN)
    result = run("dags", "list-import-errors", "--dags-folder", str(dags), "-o", "json")
    assert result.exit_code == 1  # Airflow exits 1 when there are import errors
    [row] = json.loads(result.stdout)
    assert row["filepath"] == "broken.py"
    assert row["error"].startswith("Traceback") and "ValueError: no such bucket" in row["error"]
    assert row["lineno"] == 2

    table = run("dags", "list-import-errors", "--dags-folder", str(dags))
    assert table.exit_code == 1
    assert table.stdout.splitlines()[0].split(" | ")[0].strip() == "filepath"


@pytest.mark.slow
def test_parse_timeout_option(dags):
    (dags / "slow.py").write_text("from airflow.sdk import DAG\nwhile True:\n    pass\n")
    result = run("--parse-timeout", "0.5", "dags", "list-import-errors", "--dags-folder", str(dags), "-o", "json")
    assert result.exit_code == 1
    [row] = json.loads(result.stdout)
    assert row["filepath"] == "slow.py" and "timeout" in row["message"].lower()


def test_next_execution(dags):
    result = run("dags", "next-execution", "zeta", "-n", "3", "--dags-folder", str(dags))
    assert result.exit_code == 0, result.output
    # Airflow 3: a cron preset gets CronTriggerTimetable, whose first run is AT the start date.
    assert result.stdout.splitlines() == [
        "2024-01-01T00:00:00+00:00",
        "2024-01-02T00:00:00+00:00",
        "2024-01-03T00:00:00+00:00",
    ]


def test_next_execution_when_the_schedule_ends(dags):
    result = run("dags", "next-execution", "once", "-n", "3", "--dags-folder", str(dags))
    assert result.exit_code == 0
    assert result.stdout.splitlines() == ["2024-01-01T00:00:00+00:00", "None"]
    assert "No following schedule can be found" in result.stderr


@pytest.mark.slow
def test_next_execution_with_a_plugin_timetable_from_the_sibling_plugins_folder():
    result = run(
        "dags", "next-execution", "example_workday_timetable", "-n", "2", "--dags-folder", str(REPO / "examples/dags")
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == 2 and all(line.endswith("+00:00") for line in lines)


def test_unknown_dag_is_one_clear_line(dags):
    result = run("dags", "next-execution", "nope", "--dags-folder", str(dags))
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [f"Error: DAG 'nope' was not found in {dags}"]


def test_missing_folder_is_a_usage_error(tmp_path):
    result = run("dags", "list", "--dags-folder", str(tmp_path / "missing"))
    assert result.exit_code == 2
    assert "does not exist" in result.stderr


def test_unexpected_errors_have_no_traceback_unless_verbose(dags, monkeypatch):
    import updraft.parsing.folder as folder

    def boom(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(folder, "parse_dags_folder", boom)
    quiet = run("dags", "list", "--dags-folder", str(dags))
    assert quiet.exit_code == 1
    assert quiet.stderr.strip() == "Error: RuntimeError: disk on fire (run with --verbose for the traceback)"
    loud = run("--verbose", "dags", "list", "--dags-folder", str(dags))
    assert loud.exit_code == 1
    assert "Traceback (most recent call last)" in loud.stderr


def test_verbose_shows_what_dag_files_printed(dags):
    result = run("--verbose", "dags", "list", "--dags-folder", str(dags), "-o", "json")
    assert result.exit_code == 0
    assert "this print must not reach the CLI output" in result.stderr
    assert len(json.loads(result.stdout)) == 3


@pytest.mark.slow
def test_console_script_end_to_end(dags):
    exe = Path(sys.executable).with_name("updraft")
    help_run = subprocess.run([str(exe), "--help"], capture_output=True, text=True, check=True)
    assert "dags" in help_run.stdout
    listed = subprocess.run(
        [str(exe), "dags", "list", "--dags-folder", str(dags), "-o", "json"], capture_output=True, text=True, check=False
    )
    assert listed.returncode == 0, listed.stderr
    assert [r["dag_id"] for r in json.loads(listed.stdout)] == ["alpha", "once", "zeta"]


@pytest.mark.slow
def test_help_does_not_import_the_sdk():
    code = textwrap.dedent(
        """
        import sys
        from click.testing import CliRunner
        from updraft.cli.app import cli
        CliRunner().invoke(cli, ["--help"])
        print(sorted(m for m in sys.modules if m.startswith(("updraft.sdk", "airflow", "pendulum", "boto3"))))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
