"""A worker's task server is non-dumpable by the time the worker goes on (``TaskSupervisor.start``): the window an
``exec`` leaves open, until the new interpreter says otherwise, is never one where user code runs beside it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.functional.privacy.unprivileged import python_path, unprivileged

ROOT = Path(__file__).resolve().parents[3]
# /proc/<pid>'s files belong to root while the process is non-dumpable, to the process's user otherwise.
CHILD = """
import os
from updraft.runtime.supervisor import TaskSupervisor

supervisor = TaskSupervisor()
supervisor.start()
print(os.stat(f"/proc/{supervisor._proc.pid}/environ").st_uid, os.getuid())
supervisor.close()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
def test_the_task_server_is_non_dumpable_when_start_returns(tmp_path: Path) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": "/tmp", "PYTHONPATH": python_path()}
    done = subprocess.run(unprivileged([sys.executable, "-c", CHILD]), cwd="/tmp", env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    owner, user = map(int, done.stdout.split())
    assert user != 0, "the scenario must run as a non-root user"
    assert owner == 0, "the task server was still dumpable when start() returned"
