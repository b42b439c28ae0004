"""Test-wide setup: fake AWS credentials (nothing may reach real AWS), serialized moto for concurrency tests, and
what lets pytest-xdist run the suite on every core (``-n auto --dist loadgroup`` in pyproject's addopts).

Under xdist each worker is its own process, so environment variables and ports (always 0: the OS picks) are
private to it already. Two things are shared and are made private here: the temporary directory (the parser's
and the worker's DAG mirrors live at fixed names under it, ``updraft-dags`` and ``updraft-worker-dags``, in this
process and in the local-mode processes it starts), and the setup that module- and session-scoped fixtures pay
for once (a local system per module, one CDK synth for the infra tier): every test is grouped with the others
that share its fixtures, and a group runs whole on one worker.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

# Before any boto3 client exists: tests must never find real credentials or a real region.
for _name, _value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                      "AWS_SECURITY_TOKEN": "testing", "AWS_SESSION_TOKEN": "testing",
                      "AWS_DEFAULT_REGION": "us-east-1"}.items():
    os.environ[_name] = _value


@pytest.fixture(scope="session")
def serialized_moto():
    """One request at a time into in-process moto, as local mode runs it (see updraft.local.embedded_aws)."""
    from updraft.local.embedded_aws import serialized_moto as serialize

    with serialize():
        yield


TESTS = Path(__file__).parent
# Directories whose conftest holds session-scoped fixtures: their tests run on one worker, so the fixture is built
# once (tests/infra's synth costs ~5-7 s). Every other module is its own group, for its module-scoped fixtures.
_DIRECTORY_GROUPS = ("infra", "unit/store", "unit/timetables")


def xdist_group_of(path: Path) -> str:
    """The group a test file belongs to: its directory's when that directory shares session fixtures, else its own."""
    relative = path.relative_to(TESTS).as_posix()
    return next((d for d in _DIRECTORY_GROUPS if relative.startswith(f"{d}/")), relative)


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which turns the groups into node ids on the workers
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        item.add_marker(pytest.mark.xdist_group(xdist_group_of(item.path)))


@pytest.fixture(scope="session", autouse=True)
def private_tmpdir_per_xdist_worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """An xdist worker's own temporary directory, for it and every process it starts (TMPDIR is inherited); under
    pytest's base temporary directory, which pytest cleans up as usual."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        yield
        return
    private = str(tmp_path_factory.mktemp("tmp"))
    saved = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"] = tempfile.tempdir = private
    try:
        yield
    finally:
        if saved[0] is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = saved[0]
        tempfile.tempdir = saved[1]
