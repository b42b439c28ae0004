"""What each Lambda handler imports on a cold start, in a fresh process (speed itself: bench/handler_imports.py).

Two moments: the module import (Lambda's init phase), and "ready", after the first invocation has built what it
needs. The import must not pull boto3, pynamodb or anything heavy (clients are lazy); nothing may pull the X-Ray
SDK (no Tracer); the scheduler never imports Jinja, the user-facing Airflow SDK, the task runtime or a DAG
loader, because scheduling decisions come from serialized DAGs only; nor does the API, for the same reason.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from handler_imports import ENV, READY  # noqa: E402

pytestmark = pytest.mark.slow

NEVER = {"aws_xray_sdk", "moto", "pytest"}
NOT_AT_IMPORT = {"boto3", "pynamodb", "jinja2", "airflow", "pendulum", "croniter", "jsonschema", "click"}
NOT_IN_SCHEDULER = {"jinja2", "airflow", "updraft.runtime", "updraft.parsing.loader", "updraft.operators",
                    "updraft.sdk.dag"}

CHILD = """
import json, sys
import functions.{name}.handler as h
at_import = sorted(sys.modules)
{ready}
print(json.dumps({{"import": at_import, "ready": sorted(sys.modules)}}))
"""


def _modules(name: str) -> dict[str, set[str]]:
    env = {**os.environ, **ENV}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "shared")])
    out = subprocess.run([sys.executable, "-c", CHILD.format(name=name, ready=READY[name])], cwd=ROOT, env=env,
                         capture_output=True, text=True, check=True, timeout=120).stdout
    return {stage: set(mods) for stage, mods in json.loads(out.strip().splitlines()[-1]).items()}


def _loaded(modules: set[str], names: set[str]) -> set[str]:
    return {n for n in names if n in modules or any(m.startswith(n + ".") for m in modules)}


@pytest.fixture(scope="module", params=["parser", "scheduler", "worker", "api"])
def handler_modules(request):
    return request.param, _modules(request.param)


def test_import_is_lean(handler_modules):
    name, modules = handler_modules
    assert f"functions.{name}.handler" in modules["import"]
    assert "aws_lambda_powertools" in modules["import"]
    assert _loaded(modules["import"], NOT_AT_IMPORT | NEVER) == set()


def test_first_invocation_builds_only_what_it_needs(handler_modules):
    name, modules = handler_modules
    assert _loaded(modules["ready"], NEVER) == set()
    assert {"boto3", "pynamodb"} <= _loaded(modules["ready"], {"boto3", "pynamodb"})
    if name == "scheduler":
        assert _loaded(modules["ready"], NOT_IN_SCHEDULER) == set()
        assert "updraft.scheduling.scheduler" in modules["ready"]
    if name == "worker":
        assert "updraft.runtime.worker" in modules["ready"]
    if name == "api":  # the API reads serialized DAGs and the store only, like the scheduler
        assert _loaded(modules["ready"], NOT_IN_SCHEDULER) == set()
