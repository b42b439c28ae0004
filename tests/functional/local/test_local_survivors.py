"""Nothing of a local system outlives its ``kill -9`` (issue 34: a task's ``fork(); setsid(); fork()`` left a
process running 9.5 minutes after the try, through a ``kill -9`` of the whole local system): its worker processes
end with it, so do their task servers and the running try, and the try's escaped processes with them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from local_helpers import eventually

from tests.escapees import ESCAPE, gone_within, kill_survivors, new_marker, survivors

pytestmark = pytest.mark.slow

UPDRAFT = [sys.executable, "-c", "from updraft.cli import main; main()"]

DAG = """
import datetime, time
from airflow.sdk import DAG
from airflow.providers.standard.operators.python import PythonOperator


def run_on():
    escape({marker!r})
    time.sleep(600)  # the try still runs when local mode is killed


with DAG(dag_id="escape", schedule="@once", start_date=datetime.datetime(2024, 1, 1)):
    PythonOperator(task_id="escape", python_callable=run_on)
"""


def test_kill_9_of_local_mode_ends_a_running_try_and_what_it_started(tmp_path: Path) -> None:
    marker = new_marker()
    dags = tmp_path / "dags"
    dags.mkdir()
    (dags / "escape.py").write_text(textwrap.dedent(ESCAPE) + DAG.format(marker=marker))
    env = {**os.environ, "UPDRAFT_HOME": str(tmp_path / "home")}
    env.pop("AWS_ENDPOINT_URL", None)
    system = subprocess.Popen([*UPDRAFT, "local", "--dags-folder", str(dags), "--unpause", "--tick-seconds", "1",
                               "--workers", "2", "--state-dir", str(tmp_path / "state")],
                              cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        eventually(lambda: survivors(marker), timeout=90)
    finally:
        system.send_signal(signal.SIGKILL)
        system.wait()
    try:
        assert gone_within(marker, 20) is not None, f"still running 20 s after the kill: {survivors(marker)}"
    finally:
        kill_survivors(marker)
