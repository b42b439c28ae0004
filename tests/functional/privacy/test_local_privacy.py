"""`updraft local` run by a non-root user: a DAG file's top-level code and a task (and a process each of them
starts) read neither the environment nor the memory of any process of local mode: the `updraft local` process,
its parse fork server, the worker processes (those that have not run a try yet too), their fork server and task
servers, a concurrent try's process (issue 34)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import local_process
from tests.functional.local.local_helpers import eventually
from tests.functional.privacy.unprivileged import (
    MARKER,
    assert_nothing_reached,
    findings,
    probe_code,
    python_path,
    unprivileged,
)

pytestmark = pytest.mark.slow


def _dag_file(out: Path) -> str:
    return probe_code() + f"""
import datetime, time
from airflow.sdk import DAG
from airflow.providers.standard.operators.python import PythonOperator

if not __import__("os").path.exists({str(out)!r} + ".parsed"):
    open({str(out)!r} + ".parsed", "w").close()
    probe({str(out)!r}, "parse")


def look(where):
    time.sleep(1)  # the other try is running while this one looks
    probe({str(out)!r}, where)


with DAG(dag_id="prober", schedule="@once", start_date=datetime.datetime(2024, 1, 1)):
    for where in ("first try", "second try"):
        PythonOperator(task_id=where.replace(" ", "_"), python_callable=look, op_args=[where])
"""


def test_user_code_reads_no_process_of_local_mode(work: Path) -> None:
    dags = work / "dags"
    dags.mkdir()
    out = work / "found.jsonl"
    (dags / "prober.py").write_text(_dag_file(out))
    env = {"PATH": os.environ["PATH"], "HOME": str(work), "TMPDIR": str(work), "PYTHONPATH": python_path(),
           "UPDRAFT_HOME": str(work / "home"), "UPDRAFT_TEST_SECRET": MARKER}
    command = [sys.executable, "-c", "from updraft.cli import main; main()", "local", "--dags-folder", str(dags),
               "--unpause", "--tick-seconds", "1", "--workers", "3", "--state-dir", str(work / "state")]
    system = subprocess.Popen(unprivileged(command), cwd=work, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        wanted = {"parse", "parse (grandchild)", "first try", "first try (grandchild)", "second try",
                  "second try (grandchild)"}
        eventually(lambda: set(findings(out)) >= wanted or system.poll() is not None, timeout=120, every=0.5)
    finally:
        output = local_process.stop(system)
    found = findings(out)
    assert set(found) >= wanted, output
    for entry in found.values():
        assert_nothing_reached(entry)
