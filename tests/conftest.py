"""Test-wide setup: fake AWS credentials (nothing may reach real AWS), serialized moto for concurrency tests, and
what lets pytest-xdist run the suite on every core (``-n auto --dist loadfile`` in pyproject's addopts).

Under xdist each worker is its own process, so environment variables and ports (always 0: the OS picks) are
private to it already, and ``loadfile`` runs each test file whole on one worker, so a module-scoped fixture (a
local system, a browser) is still built once. What is left shared is the temporary directory: the parser's and
the worker's DAG mirrors live at fixed names under it (``updraft-dags``, ``updraft-worker-dags``), in this
process and in the local-mode processes it starts, so each worker gets its own. A tier whose session fixtures
are dear (``SHARED_TIERS``: a CDK synth and the jsii node process behind it) runs whole on one worker, so they are
built once, not on every worker its files land on.
"""

from __future__ import annotations

import functools
import os
import sys
import tempfile
from collections.abc import Iterator

import pytest

# Before any boto3 client exists: tests must never find real credentials or a real region.
for _name, _value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                      "AWS_SECURITY_TOKEN": "testing", "AWS_SESSION_TOKEN": "testing",
                      "AWS_DEFAULT_REGION": "us-east-1"}.items():
    os.environ[_name] = _value
# The requirements cache `make install` filled with tests/providers/requirements.txt (the Makefile says the same).
os.environ.setdefault("UPDRAFT_REQUIREMENTS_CACHE", os.path.join(sys.prefix, "requirements-cache"))
# Local mode's home (its endpoint file, `dags test`'s metrics): never the real ~/.updraft; a test that starts local
# mode sets its own.
os.environ.setdefault("UPDRAFT_HOME", tempfile.mkdtemp(prefix="updraft-home-"))
# pytest keeps the test modules it rewrites (their asserts) as bytecode beside them, unless bytecode is not to be
# written (PYTHONDONTWRITEBYTECODE, set on some machines and CI runners). Then every xdist worker rewrote all ~700
# test modules again on every run, ~15 CPU-seconds each before the first test. Written as `make bytecode` writes
# the package's; the processes tests start still inherit the variable.
sys.dont_write_bytecode = False


def _share_botocore_models() -> None:
    """One botocore data loader for every session of the test process.

    moto's ``mock_aws`` drops boto3's default session and pynamodb makes its own, so nearly every test builds a new
    botocore session, and each session's loader decodes the endpoint, partition and service JSON files again (a
    few hundred milliseconds, more on a loaded machine). The files never change: a session of a process shares
    its loader's parsed copies between its clients already, and here every session shares them.
    """
    import botocore.loaders
    import botocore.session

    botocore.session.create_loader = functools.lru_cache(maxsize=None)(botocore.loaders.create_loader)


_share_botocore_models()


def _speed_up_moto() -> None:
    """moto as local mode runs it, for every test, not only those that go through ``embedded_aws``:
    ``updraft.local.moto_speedups`` (the tests that ``mock_aws()`` themselves spent half their time in moto's
    member-by-member response serializer; the speed-ups answer byte for byte as moto does,
    tests/unit/local/test_moto_speedups.py compares the two in fresh processes, untouched by this) and
    ``moto_transactions``' item-local rollback (moto's own deep-copies every table a transaction names, once per
    item: a quarter of the time in moto of the scheduling and API tests). Before, a test process had the second
    only once some test had started an embedded AWS server in it, so a test's moto depended on the order."""
    from updraft.local import moto_speedups, moto_transactions

    moto_speedups.apply()
    moto_transactions.apply()


_speed_up_moto()


# Tiers whose files share session fixtures that cost seconds of CPU each: ``aws_cdk``'s node process (~4.5 CPU-s to
# start) and the stacks synthesized once per session (~6 CPU-s each). Spread file by file over 4 workers, the infra
# tier started four node processes and synthesized the dev stack four times.
SHARED_TIERS = ("tests/infra/", "tests/deploy/")


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """``--dist loadfile`` with each of :data:`SHARED_TIERS` as one unit of work; any other distribution as asked."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class TierScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return next((tier for tier in SHARED_TIERS if nodeid.startswith(tier)), super()._split_scope(nodeid))

    return TierScheduling(config, log)


@pytest.fixture(scope="session")
def serialized_moto():
    """One request at a time into in-process moto, as local mode runs it (see updraft.local.embedded_aws)."""
    from updraft.local.embedded_aws import serialized_moto as serialize

    with serialize():
        yield


@pytest.fixture
def isolated_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let a test register or break plugins without leaking into the process-wide registry: a plugin a test
    registers under its name from another module would make a later test's plugin of that name be skipped."""
    import updraft.plugins

    monkeypatch.setattr(updraft.plugins, "_plugins", dict(updraft.plugins._plugins))
    monkeypatch.setattr(updraft.plugins, "_import_errors", dict(updraft.plugins._import_errors))


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
