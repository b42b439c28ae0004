"""What the API acknowledged survives ``kill -9`` of ``updraft local --state-dir`` (issue 34: a trigger answered 200
was lost, and tries that had finished ran again, whatever the last 15 s snapshot had not caught)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from local_helpers import eventually

pytestmark = pytest.mark.slow

UPDRAFT = [sys.executable, "-c", "from updraft.cli import main; main()"]

DAG = """
    from datetime import datetime
    from airflow.sdk import dag, task

    @task
    def quick():
        return 1

    @dag(dag_id="{dag_id}", schedule=None, start_date=datetime(2024, 1, 1), catchup=False)
    def pipeline():
        quick()

    pipeline()
"""


def _api(base: str, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    request = urllib.request.Request(base + path, method=method, data=json.dumps(body).encode() if body else None,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


class Local:
    """``updraft local`` as a process of its own, on a DAGs folder and a state dir."""

    def __init__(self, tmp_path: Path) -> None:
        self.home = tmp_path / "home"
        self.env = {**os.environ, "UPDRAFT_HOME": str(self.home)}
        self.env.pop("AWS_ENDPOINT_URL", None)
        self.args = [*UPDRAFT, "local", "--dags-folder", str(tmp_path / "dags"), "--state-dir", str(tmp_path / "state"),
                     "--tick-seconds", "0.5", "--workers", "1"]
        self.cwd = tmp_path
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> str:
        """Start and return the API's address once it answers."""
        endpoint = self.home / "local.json"
        endpoint.unlink(missing_ok=True)  # a killed process leaves its own behind
        self.process = subprocess.Popen(self.args, cwd=self.cwd, env=self.env, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        eventually(endpoint.is_file, timeout=90)
        return str(json.loads(endpoint.read_text())["api_url"])

    def kill9(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _run(api: str, dag_id: str, run_id: str) -> Any:
    status, body = _api(api, "GET", f"/api/v2/dags/{dag_id}/dagRuns/{run_id}")
    return body if status == 200 else None


def test_a_trigger_answered_200_and_a_finished_try_survive_kill_9(tmp_path: Path) -> None:
    (tmp_path / "dags").mkdir()
    for dag_id in ("finished", "acknowledged"):
        (tmp_path / "dags" / f"{dag_id}.py").write_text(textwrap.dedent(DAG.format(dag_id=dag_id)))
    local = Local(tmp_path)
    try:
        api = local.start()
        for dag_id in ("finished", "acknowledged"):
            eventually(lambda dag_id=dag_id: _api(api, "GET", f"/api/v2/dags/{dag_id}")[0] == 200, timeout=60)
        assert _api(api, "PATCH", "/api/v2/dags/finished", {"is_paused": False})[0] == 200
        status, ran = _api(api, "POST", "/api/v2/dags/finished/dagRuns", {"logical_date": None})
        assert status == 200, ran
        eventually(lambda: (_run(api, "finished", ran["dag_run_id"]) or {}).get("state") == "success", timeout=60)
        # The DAG stays paused: its run is only what the trigger wrote, and the kill comes right after the answer.
        status, acknowledged = _api(api, "POST", "/api/v2/dags/acknowledged/dagRuns", {"logical_date": None})
        assert status == 200, acknowledged
        local.kill9()

        api = local.start()
        kept = _run(api, "acknowledged", acknowledged["dag_run_id"])
        assert kept is not None and kept["state"] == "queued"
        finished = _run(api, "finished", ran["dag_run_id"])
        assert finished is not None and finished["state"] == "success"
        status, tis = _api(api, "GET", f"/api/v2/dags/finished/dagRuns/{ran['dag_run_id']}/taskInstances")
        assert status == 200 and [(ti["state"], ti["try_number"]) for ti in tis["task_instances"]] == [("success", 1)]
    finally:
        local.stop()
