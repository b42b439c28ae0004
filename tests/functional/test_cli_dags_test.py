"""`updraft dags test`: one run to the end on the embedded AWS, Airflow's exit codes and JSON shape."""

from __future__ import annotations

import json
import shutil
import textwrap
import zipfile

import pytest
from click.testing import CliRunner

from updraft.cli.app import cli

pytestmark = pytest.mark.slow

HEADER = """\
import datetime
from airflow.sdk import DAG, task
from airflow.exceptions import AirflowFailException
START = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)
"""


def _run(folder, *args):
    result = CliRunner().invoke(cli, ["dags", "test", *args, "--dags-folder", str(folder)], catch_exceptions=False)
    return result


def _write(folder, name, body):
    (folder / name).write_text(HEADER + textwrap.dedent(body))


def test_json_output_and_success_exit_code(tmp_path):
    _write(tmp_path, "ok.py", """
        with DAG("ok", schedule=None, start_date=START):
            @task
            def make():
                return [1, 2, 3]

            @task
            def double(x):
                return 2 * x

            @task.branch
            def pick():
                return "kept"

            @task
            def kept():
                return None

            @task
            def dropped():
                return None

            double.expand(x=make())
            pick() >> [kept(), dropped()]
    """)
    result = _run(tmp_path, "ok", "2024-01-02", "-o", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["dag_id"] == "ok" and doc["run_state"] == "success"
    tasks = doc["tasks"]
    assert {k: (v["state"], v["try_number"]) for k, v in tasks.items()} == {
        "double[0]": ("success", 1), "double[1]": ("success", 1), "double[2]": ("success", 1),
        "dropped": ("skipped", 0), "kept": ("success", 1), "make": ("success", 1), "pick": ("success", 1)}
    assert tasks["make"]["start_date"] and tasks["make"]["end_date"]


def test_the_run_s_airflow_metrics_are_appended_under_local_mode_s_home(tmp_path, monkeypatch):
    monkeypatch.setenv("UPDRAFT_HOME", str(tmp_path / "home"))
    _write(tmp_path, "hi.py", """
        with DAG("hi", schedule=None, start_date=START):
            @task
            def hello():
                return 1

            hello()
    """)
    assert _run(tmp_path, "hi", "-o", "json").exit_code == 0
    lines = [json.loads(line) for line in (tmp_path / "home" / "metrics" / "dags-test.emf").read_text().splitlines()]
    names = {metric["Name"]: line for line in lines for metric in line["_aws"]["CloudWatchMetrics"][0]["Metrics"]}
    assert {"ti.start", "ti.finish", "task.duration", "dagrun.duration.success"} <= set(names)
    assert (names["ti.finish"]["task_id"], names["ti.finish"]["state"]) == ("hello", "success")


def test_failed_run_exits_1_and_reports_upstream_failed_with_no_try(tmp_path):
    _write(tmp_path, "bad.py", """
        with DAG("bad", schedule=None, start_date=START):
            @task(retries=3)
            def boom():
                raise AirflowFailException("no retry for this")

            @task
            def after():
                return None

            boom() >> after()
    """)
    result = _run(tmp_path, "bad", "-o", "json")
    assert result.exit_code == 1
    doc = json.loads(result.output)
    assert doc["run_state"] == "failed"
    assert (doc["tasks"]["boom"]["state"], doc["tasks"]["boom"]["try_number"]) == ("failed", 1)
    assert (doc["tasks"]["after"]["state"], doc["tasks"]["after"]["try_number"]) == ("upstream_failed", 0)


def test_import_error_exits_2_with_the_error_on_stderr(tmp_path):
    (tmp_path / "broken.py").write_text("from airflow.sdk import DAG\nraise RuntimeError('cannot load')\n")
    result = CliRunner().invoke(cli, ["dags", "test", "broken", "--dags-folder", str(tmp_path)])
    assert result.exit_code == 2
    assert "not found" in result.output and "RuntimeError: cannot load" in result.output


def test_human_output_has_a_line_per_change_and_a_summary(tmp_path):
    _write(tmp_path, "hi.py", """
        with DAG("hi", schedule=None, start_date=START):
            @task
            def hello():
                print("hello")

            hello()
    """)
    result = _run(tmp_path, "hi")
    assert result.exit_code == 0
    assert "hello" in result.output and "success (try 1)" in result.output
    assert "DAG run manual__" in result.output and ": success in" in result.output


def test_every_state_change_gets_its_line_however_quick(tmp_path):
    _write(tmp_path, "flaky.py", """
        with DAG("flaky", schedule=None, start_date=START,
                 default_args={"retries": 1, "retry_delay": datetime.timedelta(seconds=0)}):
            @task
            def flaky(ti=None):
                if ti.try_number == 1:
                    raise ValueError("the first try fails")

            flaky()
    """)
    result = _run(tmp_path, "flaky")
    assert result.exit_code == 0, result.output
    changes = [line.split(None, 2)[2].strip() for line in result.output.splitlines() if " flaky " in f"{line} "
               and "(try " in line]
    assert changes == ["queued (try 1)", "running (try 1)", "up_for_retry (try 1)", "scheduled (try 1)",
                       "queued (try 2)", "running (try 2)", "success (try 2)"]


def test_bad_conf_is_a_usage_error(tmp_path):
    _write(tmp_path, "hi.py", 'with DAG("hi", schedule=None, start_date=START):\n    pass\n')
    result = CliRunner().invoke(cli, ["dags", "test", "hi", "--conf", "{not json", "--dags-folder", str(tmp_path)])
    assert result.exit_code == 2 and "--conf is not valid JSON" in result.output


@pytest.mark.parametrize("layout", ["plugins folder", "MWAA plugins.zip"])
def test_a_custom_timetable_from_the_plugins_folder_runs(tmp_path, layout):
    # The test's own process reads the stored (serialized) DAG back, so it must have loaded the plugins too, as
    # Airflow's `dags test` does: else a DAG on a plugin's timetable cannot be tested at all.
    dags, plugins = tmp_path / "dags", tmp_path / "plugins"
    dags.mkdir()
    plugins.mkdir()
    (plugins / "never_tt.py").write_text(textwrap.dedent("""
        from airflow.plugins_manager import AirflowPlugin
        from airflow.timetables.base import DataInterval, Timetable

        class NeverButManual(Timetable):
            def infer_manual_data_interval(self, run_after):
                return DataInterval.exact(run_after)

            def next_dagrun_info(self, *, last_automated_data_interval, restriction):
                return None

        class NeverPlugin(AirflowPlugin):
            name = "never_plugin"
            timetables = [NeverButManual]
    """))
    _write(dags, "tt.py", """
        from never_tt import NeverButManual
        with DAG("tt", schedule=NeverButManual(), start_date=START):
            @task
            def one():
                return 1

            one()
    """)
    if layout == "MWAA plugins.zip":  # MWAA's layout: dags/ and plugins.zip side by side, found without a flag
        with zipfile.ZipFile(tmp_path / "plugins.zip", "w") as archive:
            archive.write(plugins / "never_tt.py", "never_tt.py")
        shutil.rmtree(plugins)
    result = _run(dags, "tt", "2024-01-02", "-o", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["run_state"] == "success" and doc["tasks"]["one"]["state"] == "success"


def test_a_plugins_zip_entry_that_would_land_outside_its_folder_is_refused_naming_it(tmp_path):
    dags = tmp_path / "dags"
    dags.mkdir()
    _write(dags, "hi.py", """
        with DAG("hi", schedule=None, start_date=START):
            @task
            def one():
                return 1

            one()
    """)
    with zipfile.ZipFile(tmp_path / "plugins.zip", "w") as archive:
        archive.writestr("../escaped.py", "x = 1\n")
    result = _run(dags, "hi", "-o", "json")
    assert result.exit_code == 2 and "the entry '../escaped.py' would be written outside the plugins folder" in (
        result.output)
    assert not (tmp_path / "escaped.py").exists()


def test_conf_the_params_reject_is_a_usage_error(tmp_path):
    _write(tmp_path, "pd.py", """
        from airflow.sdk import Param
        with DAG("pd", schedule=None, start_date=START, params={"n": Param(1, type="integer")}):
            @task
            def t():
                return None

            t()
    """)
    result = CliRunner().invoke(cli, ["dags", "test", "pd", "--conf", '{"n": "x"}', "-o", "json",
                                      "--dags-folder", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert "Invalid input for param n" in result.output


def test_only_the_tested_run_runs_even_for_a_catchup_dag_with_a_backlog(tmp_path):
    from updraft.local.dag_test import run_dag_test

    _write(tmp_path, "backlog.py", """
        with DAG("backlog", schedule="@daily", start_date=START, catchup=True, max_active_runs=1):
            @task
            def work():
                return None

            work()
    """)
    # Before: the backlog's scheduled runs ran beside it, and with max_active_runs=1 the test waited behind them.
    result = run_dag_test("backlog", dags_folder=str(tmp_path), timeout_s=60)
    assert result.run_state == "success" and result.run_id.startswith("manual__")
    assert result.tasks == {"work": {**result.tasks["work"], "state": "success", "try_number": 1}}


def test_json_output_is_the_one_document_on_stdout_whatever_plugins_and_tasks_print(tmp_path):
    """-o json is exactly one JSON document on standard output: a plugin's print in this process, a task's raw write
    to file descriptor 1 in its child (and moto's Docker warnings) go to standard error (before, they came first)."""
    import os
    import subprocess
    import sys

    (tmp_path / "dags").mkdir()
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "noisy_plugin.py").write_text('print("a plugin printing")\n')
    _write(tmp_path / "dags", "noisy.py", """
        import os

        with DAG("noisy", schedule=None, start_date=START):
            @task
            def raw():
                os.write(1, b"a raw write to fd 1\\n")

            raw()
    """)
    done = subprocess.run([sys.executable, "-c", "from updraft.cli import main; main()", "dags", "test", "noisy",
                           "2024-01-02", "--dags-folder", str(tmp_path / "dags"), "--plugins-folder",
                           str(tmp_path / "plugins"), "-o", "json"],
                          check=False, env={**os.environ, "PIP_NO_INDEX": "1"}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["tasks"]["raw"]["state"] == "success"
    assert "a plugin printing" in done.stderr and "a raw write to fd 1" in done.stderr
