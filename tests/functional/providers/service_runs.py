"""`updraft dags test --requirements tests/providers/requirements.txt -o json` run as a subprocess for the provider
end-to-end tests: DAG packages are activated only in that process (never in the test process), pip never reaches
an index (PIP_NO_INDEX: the providers come from the cache `make install` filled), connections come from the
AIRFLOW_CONN_* variables given.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
REQUIREMENTS = ROOT / "tests" / "providers" / "requirements.txt"
DAGS = Path(__file__).parent / "service_dags"
LOGICAL_DATE = "2024-03-05"


@dataclass
class DagRun:
    run_state: str
    tasks: dict[str, tuple[str, int]]  # task -> (state, try_number)
    out: Path  # what the DAG's record tasks wrote ($E2E_OUT)
    logs: Path
    stderr: str
    wall_s: float

    def recorded(self, name: str) -> Any:
        return json.loads((self.out / f"{name}.json").read_text())

    def log(self, task_id: str, try_number: int = 1) -> str:
        found = sorted(self.logs.glob(f"*/*/{task_id}/*/{try_number}.log"))
        return found[0].read_text() if found else f"(no log for {task_id} try {try_number})"

    def check(self, expected: dict[str, tuple[str, int]]) -> None:
        """The (state, try_number) of every task is as expected; a difference shows the tasks' logs."""
        diff = {k: (self.tasks.get(k), expected.get(k)) for k in self.tasks.keys() | expected.keys()
                if self.tasks.get(k) != expected.get(k)}
        logs = "\n".join(f"--- {task} ---\n{self.log(task, max(1, (self.tasks.get(task) or ('', 1))[1]))}"
                         for task in sorted(diff))
        assert not diff, f"(updraft, expected) differ: {diff}\n{logs}\n--- stderr ---\n{self.stderr[-3000:]}"


def dags_test(folder: str, dag_id: str, tmp_path: Path, env: dict[str, str], timeout: float = 240) -> DagRun:
    out, logs = tmp_path / "out", tmp_path / "logs"
    out.mkdir(exist_ok=True)
    child_env = {**os.environ, "PIP_NO_INDEX": "1", "E2E_OUT": str(out), **env}
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-c", "from updraft.cli import main; main()", "dags", "test", dag_id, LOGICAL_DATE,
         "--dags-folder", str(DAGS / folder), "--requirements", str(REQUIREMENTS), "--log-folder", str(logs),
         "-o", "json"],
        env=child_env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # its task and parse children too
        stdout, stderr = process.communicate()
        raise AssertionError(f"`dags test {dag_id}` still ran after {timeout} s:\n{stderr[-5000:]}") from None
    wall_s = time.monotonic() - started
    last = stdout.strip().splitlines()[-1:] or [""]
    assert last[0].startswith("{"), f"`dags test {dag_id}` gave no result (exit {process.returncode}):\n" \
                                    f"{stdout[-3000:]}\n{stderr[-5000:]}"
    result = json.loads(last[0])
    tasks = {label: (row["state"], row["try_number"]) for label, row in result["tasks"].items()}
    return DagRun(result["run_state"], tasks, out, logs, stderr, wall_s)
