"""Local mode's working folders are its own (issue 34): the DAG mirrors live in a private folder of the state dir
(or ``$UPDRAFT_HOME``), made for each start, so what another user left at the old fixed paths in the temporary
folder (``updraft-dags``, ``updraft-worker-dags``) changes nothing, and two systems never share a mirror."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from local_helpers import eventually, now, write_dag

from updraft.local.work_dir import make_work_dir
from updraft.scheduling.commands.dag_registration import set_paused
from updraft.scheduling.commands.triggering import trigger_dag

pytestmark = pytest.mark.slow

NOBODY = 65534

ONE_TASK = """
    from datetime import datetime
    from airflow.sdk import dag, task

    @task
    def where():
        return "ran"

    @dag(dag_id="where", schedule=None, start_date=datetime(2024, 1, 1), catchup=False)
    def pipeline():
        where()

    pipeline()
"""


def _plant_foreign_paths() -> list[Path]:
    """What another user of the machine could leave at the old fixed names: not folders at all, and not ours."""
    planted = []
    for name in ("updraft-dags", "updraft-worker-dags"):
        path = Path(tempfile.gettempdir()) / name
        if path.is_dir():
            os.rename(path, f"{path}.moved-{os.getpid()}")
        path.write_text("another user's file\n")
        if os.getuid() == 0:
            os.chown(path, NOBODY, NOBODY)
        planted.append(path)
    return planted


def test_a_system_parses_and_runs_in_its_own_folder_whatever_lies_at_the_old_fixed_paths(
        tmp_path: Path, start_system) -> None:
    planted = _plant_foreign_paths()
    try:
        dags = tmp_path / "dags"
        dags.mkdir()
        write_dag(dags, "where.py", ONE_TASK)
        state = tmp_path / "state"
        system = start_system(dags, state_dir=str(state))
        store = system.services.store
        eventually(lambda: store.get_dag_meta("where"), timeout=60)
        set_paused(store, "where", False)
        run = trigger_dag(store, "where", now=now())
        system.services.nudge_scheduler("where", run.run_id)

        def finished():
            got = store.get_run("where", run.run_id)
            return got if got is not None and got.state.value in ("success", "failed") else None

        assert eventually(finished, timeout=60).state.value == "success"
        work = system.work_dir
        assert work.parent == state.resolve() and stat.S_IMODE(work.stat().st_mode) == 0o700
        assert stat.S_IMODE(state.stat().st_mode) == 0o700  # the snapshot holds variables and connections
        assert (work / "updraft-dags" / "where.py").is_file()  # the parser's mirror
        assert (work / "updraft-worker-dags" / "where.py").is_file()  # the workers' mirror
        assert all(path.read_text() == "another user's file\n" for path in planted)  # never touched
        system.stop()
        assert not work.exists()  # removed on stop
    finally:
        for path in planted:
            path.unlink(missing_ok=True)


def test_two_systems_never_share_a_working_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    first, second = make_work_dir(tmp_path / "a", home), make_work_dir(tmp_path / "b", home)
    assert first.parent == (tmp_path / "a") and second.parent == (tmp_path / "b")
    # Without a state dir, two systems of one user share $UPDRAFT_HOME but not their folders.
    third, fourth = make_work_dir(None, home), make_work_dir(None, home)
    assert third.parent == fourth.parent == home / "work" and third != fourth
    for folder in (first, second, third, fourth, home / "work"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_a_killed_systems_folder_is_removed_at_the_next_start_and_a_running_ones_kept(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    stale = tmp_path / f"work-{dead.stdout.strip()}-abc"
    running = tmp_path / f"work-{os.getppid()}-def"
    for folder in (stale, running):
        (folder / "updraft-dags").mkdir(parents=True)
    fresh = make_work_dir(tmp_path, tmp_path / "home")
    assert not stale.exists() and running.is_dir() and fresh.is_dir()
