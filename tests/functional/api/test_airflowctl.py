"""Airflow's own command line client, ``airflowctl`` (apache-airflow-ctl), against ``updraft local``: it logs in with
a user name and password, lists the DAGs and triggers a run, each reply parsed by its strict pydantic models.
(Its ``--conf`` option cannot be used: 0.1.5 declares it ``type=dict``, which argparse cannot build from text; the
official client's tests cover conf.)

airflowctl keeps its URL and token under ``AIRFLOW_HOME``; ``AIRFLOW_CLI_DEBUG_MODE=true`` is its documented way to
keep the token in that directory's file instead of a system keyring (a test machine has none).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.functional.api.local_system_helpers import running_local_system, until
from updraft.local.system import LocalSystem

pytestmark = pytest.mark.slow

DAG_FILE = '''
from datetime import datetime
from airflow.sdk import dag, task

@dag(schedule=None, start_date=datetime(2024, 1, 1))
def ctl_smoke():
    @task
    def hello():
        return "hello"

    hello()

ctl_smoke()
'''

AIRFLOWCTL = shutil.which("airflowctl", path=str(Path(sys.executable).parent))


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSystem]:
    with running_local_system(tmp_path_factory.mktemp("airflowctl"), {"ctl_smoke.py": DAG_FILE},
                              workers=1) as running:
        yield running


def _airflowctl(home: Path, *args: str) -> str:
    """Runs airflowctl as a user would (its own process), returning its standard output; fails on its exit code."""
    assert AIRFLOWCTL, "apache-airflow-ctl is not installed (pyproject's dev extra)"
    env = {**os.environ, "AIRFLOW_HOME": str(home), "AIRFLOW_CLI_DEBUG_MODE": "true", "NO_COLOR": "1",
           "COLUMNS": "200"}
    env.pop("AIRFLOW_CLI_TOKEN", None)
    done = subprocess.run([AIRFLOWCTL, *args], check=False, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"airflowctl {' '.join(args)}: {done.stdout}\n{done.stderr}"
    return done.stdout


def test_airflowctl_logs_in_lists_dags_and_triggers_a_run(system: LocalSystem, tmp_path: Path):
    login = _airflowctl(tmp_path, "auth", "login", "--api-url", system.api.url,
                        "--username", "admin", "--password", "admin")
    assert "Login successful" in login

    listed = until(lambda: [d["dag_id"] for d in json.loads(_airflowctl(tmp_path, "dags", "list", "-o", "json"))
                             if d["dag_id"] == "ctl_smoke"])
    assert listed == ["ctl_smoke"]

    [triggered] = json.loads(_airflowctl(tmp_path, "dags", "trigger", "ctl_smoke", "--dag-run-id", "by_airflowctl",
                                         "--output", "json"))
    assert triggered["dag_run_id"] == "by_airflowctl"

    [got] = json.loads(_airflowctl(tmp_path, "dagrun", "get", "ctl_smoke", "by_airflowctl", "--output", "json"))
    assert (got["dag_run_id"], got["run_type"]) == ("by_airflowctl", "manual")
    token = json.loads((tmp_path / "debug_creds_production.json").read_text())["api_token_production"]
    request = urllib.request.Request(f"{system.api.url}/api/v2/dags/ctl_smoke/dagRuns",
                                     headers={"Authorization": f"Bearer {token}"})
    runs = json.load(urllib.request.urlopen(request, timeout=30))["dag_runs"]
    assert [r["dag_run_id"] for r in runs] == ["by_airflowctl"]
