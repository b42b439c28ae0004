"""A deploy of this release over a live environment of the previous one loses nothing (issue 32).

The previous release (``OLD_RELEASE``, the commit of the last landed submission) runs for real, from its own
source, in a subprocess against the same embedded AWS (``old_side.py``): it registers a DAG and serializes it with
its code, triggers two runs, claims and starts tries, fails one (up for retry) and leaves one running. This
release's scheduler and workers then take over, while the old worker is still running its try; the old worker
finishes it with its own code (a Lambda invocation started before a deploy runs on its version to the end) and
its mini scheduler claims the next tries. This release runs everything else to the end. Every item the old code
wrote (the serialized DAG, runs, instances and their tickets, limit counters, pools) is read and changed by the new
code.

When a landed release changes the item layout, move ``OLD_RELEASE`` to it; a layout change that breaks reading
what the previous release wrote fails here first.
"""

from __future__ import annotations

import collections
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.functional.scheduling.harness import held_slots
from updraft.executors.base import Dispatch
from updraft.executors.recording import RecordingExecutor
from updraft.model.limits import DEFAULT_POOL, PARALLELISM_LIMIT, dag_runs_limit, pool_limit, run_tasks_limit
from updraft.model.states import DagRunState, TaskInstanceState
from updraft.runtime.worker import report_try, run_for
from updraft.scheduling.scheduler import Scheduler, SchedulerConfig
from updraft.scheduling.try_lifecycle import TryResult, start_try
from updraft.store.config import StoreConfig
from updraft.store.dynamo import DynamoStore

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
OLD_RELEASE = "efbfb890b3c712815ce2dc0f69571152ccd8b880"
OLD_SIDE = Path(__file__).with_name("old_side.py")


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _resolve(commit: str) -> str | None:
    """The commit in this clone's history (None: a shallow clone without it)."""
    if shutil.which("git") is None:
        return None
    found = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", "--quiet", f"{commit[:7]}^{{commit}}"],
                           check=False, capture_output=True, text=True)
    return found.stdout.strip() or None


@pytest.fixture(scope="module")
def old_release(tmp_path_factory) -> Path:
    """The previous release's ``shared/`` tree, extracted from git (not checked out: no work tree is touched)."""
    commit = _resolve(OLD_RELEASE)
    if commit is None:
        pytest.skip(f"the previous release {OLD_RELEASE[:7]} is not in this clone's history (a shallow clone)")
    target = tmp_path_factory.mktemp("old-release")
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "shared"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


@pytest.fixture
def aws():
    from updraft.local.moto_server import EmbeddedAwsServer

    with EmbeddedAwsServer() as server:
        server.reset()
        yield server


class _Old:
    """The old release's process: its dispatches (JSON lines) read as they come."""

    def __init__(self, old_release: Path, url: str) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("UPDRAFT_", "PYTHONPATH"))}
        env.update(PYTHONPATH=str(old_release / "shared"), AWS_DEFAULT_REGION="us-east-1",
                   AWS_ACCESS_KEY_ID="upgrade", AWS_SECRET_ACCESS_KEY="upgrade")
        self.process = subprocess.Popen([sys.executable, "-u", str(OLD_SIDE), url],
                                        env=env, cwd=str(old_release), stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def until(self, marker: str) -> list[Dispatch]:
        dispatches = []
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.strip() == marker:
                return dispatches
            dispatches.append(Dispatch.from_payload(json.loads(line)))
        raise AssertionError(f"the old release stopped before {marker}: {self.process.stderr.read()}")

    def go_on(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write("go\n")
        self.process.stdin.flush()


def test_a_live_environment_of_the_previous_release_runs_on_after_the_deploy(old_release, aws):
    old = _Old(old_release, aws.url)
    try:
        in_flight = old.until("RUNNING")
        store = DynamoStore(StoreConfig(table_name="updraft-upgrade", region="us-east-1", host=aws.url))
        executor = RecordingExecutor()
        scheduler = Scheduler(store, executor, SchedulerConfig(parallelism=32), clock=_now)
        started: collections.Counter = collections.Counter()

        def run(dispatch: Dispatch) -> None:
            ti = start_try(store, dispatch.key, dispatch.try_id, now=_now())
            assert ti is not None, f"{dispatch.key.label} try {dispatch.try_number} could not start"
            started[(dispatch.key, dispatch.try_number)] += 1
            report_try(dispatch, TryResult(TaskInstanceState.SUCCESS), store=store, scheduler=scheduler,
                       dag=scheduler.dag("upgrade", run_for(dispatch, store).dag_hash), started=ti, now_fn=_now)

        # Deployed: the new scheduler's tick, while the old worker's try is still running.
        scheduler.run_pass()
        claimed = in_flight + executor.take()
        assert [(d.key.task_id, d.try_number) for d in claimed] == [("b", 2)], "b's retry, claimed once"
        for dispatch in claimed:
            run(dispatch)
        old.go_on()
        handed = old.until("DONE")  # the old worker finished a; its mini scheduler claimed the pool's two slots
        assert len(handed) == 2 and {d.key.task_id for d in handed} <= {"m0", "m1", "m2", "m3"}, handed
        assert old.process.wait(timeout=60) == 0, old.process.stderr.read()
        pending = handed
        for _ in range(20):
            for dispatch in pending:
                run(dispatch)
            pending = executor.take()
            if not pending:
                scheduler.run_pass()
                pending = executor.take()
            if not pending and all(store.get_run("upgrade", r).state in (DagRunState.SUCCESS, DagRunState.FAILED)
                                   for r in ("r1", "r2")):
                break
        for run_id in ("r1", "r2"):
            run_ = store.get_run("upgrade", run_id)
            states = {ti.task_id: ti.state for ti in store.get_run_tis("upgrade", run_id)}
            assert run_.state == DagRunState.SUCCESS, (run_id, states)
            assert set(states.values()) == {TaskInstanceState.SUCCESS}, (run_id, states)
        assert {ti.task_id: ti.try_number for ti in store.get_run_tis("upgrade", "r1")}["b"] == 2
        assert max(started.values()) == 1, "no try started twice"
        for limit_id in (pool_limit("small"), pool_limit(DEFAULT_POOL), PARALLELISM_LIMIT, dag_runs_limit("upgrade"),
                         run_tasks_limit("upgrade", "r1"), run_tasks_limit("upgrade", "r2")):
            assert held_slots(store, limit_id) == 0, limit_id
    finally:
        if old.process.poll() is None:
            old.process.kill()
