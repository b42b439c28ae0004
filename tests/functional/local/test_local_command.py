"""`updraft local` as a user runs it: a process in the foreground, the CLI beside it, Ctrl-C to stop (its signal
sent to a system that inherited SIGINT ignored: see tests/local_process.py)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from local_helpers import eventually

from tests import local_process
from tests.local_process import UPDRAFT

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]


def test_local_runs_the_examples_the_cli_drives_it_and_ctrl_c_stops_it_cleanly(tmp_path: Path) -> None:
    env = {**os.environ, "UPDRAFT_HOME": str(tmp_path / "home")}
    env.pop("AWS_ENDPOINT_URL", None)
    state = tmp_path / "state"
    system = local_process.start(["local", "--dags-folder", str(ROOT / "examples" / "dags"), "--unpause",
                                  "--tick-seconds", "1", "--workers", "2", "--parallelism", "8", "--state-dir",
                                  str(state)], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
    try:
        endpoint = tmp_path / "home" / "local.json"
        eventually(endpoint.is_file, timeout=60)

        def cli(*args: str) -> subprocess.CompletedProcess:
            return subprocess.run([*UPDRAFT, *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                                  timeout=120, check=False)

        def five_dags() -> list[dict] | None:
            rows = json.loads(cli("dags", "list", "-o", "json").stdout or "[]")
            return rows if len(rows) == 5 else None

        listed = eventually(five_dags, timeout=60)
        assert {row["dag_id"] for row in listed} >= {"example_taskflow_etl", "example_workday_timetable"}
        assert json.loads(cli("dags", "list-import-errors", "-o", "json").stdout or "[]") == []
        triggered = cli("dags", "trigger", "example_dynamic_mapping", "--conf", '{"prefix": "in/"}', "--wait")
        assert triggered.returncode == 0, triggered.stdout + triggered.stderr
        runs = json.loads(cli("runs", "list", "example_dynamic_mapping", "-o", "json").stdout)
        assert any(run["run_type"] == "manual" and run["state"] == "success" for run in runs)
    finally:
        out = local_process.stop(system)
    assert system.returncode == 0, out
    assert "Updraft local is running" in out and "stopped" in out.splitlines()[-1]
    # Parallelism above the workers is capped to them, with a warning (issue 20).
    assert "Warning: --parallelism 8 exceeds --workers 2" in out and "at most 2 tries at once" in out
    assert "run example_dynamic_mapping manual__" in out  # a line per run event
    assert not endpoint.exists()  # the CLI no longer finds a system that stopped
    assert (state / "snapshot" / "table.jsonl").is_file()

