"""Every Lambda handler makes its process non-dumpable when Lambda imports it, before it holds a client or runs
user code (``updraft.process_guard``): a handler added without it fails here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.functional.privacy.unprivileged import python_path

ROOT = Path(__file__).resolve().parents[3]
HANDLERS = sorted(path.parent.name for path in (ROOT / "functions").glob("*/handler.py"))
CHILD = """
import ctypes
import functions.{name}.handler
print(ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))  # PR_GET_DUMPABLE
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
@pytest.mark.parametrize("name", HANDLERS)
def test_importing_a_handler_makes_its_process_non_dumpable(name: str) -> None:
    env = {**os.environ, "PYTHONPATH": python_path(), "AWS_DEFAULT_REGION": "us-east-1",
           "UPDRAFT_TABLE": "updraft-test", "POWERTOOLS_METRICS_DISABLED": "true"}
    done = subprocess.run([sys.executable, "-c", CHILD.format(name=name)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == "0", f"functions/{name}/handler.py leaves its process dumpable"
