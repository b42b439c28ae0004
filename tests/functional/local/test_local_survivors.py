"""Nothing of a local system outlives its ``kill -9`` (issue 34: a task's ``fork(); setsid(); fork()`` left a
process running 9.5 minutes after the try, through a ``kill -9`` of the whole local system): its worker processes
end with it, so do their task servers and the running try, and the try's escaped process with them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from local_helpers import eventually, write_dag

UPDRAFT = [sys.executable, "-c", "from updraft.cli import main; main()"]

DAG = """
    import datetime, os, time
    from airflow.sdk import DAG
    from airflow.providers.standard.operators.python import PythonOperator

    def escape():
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                with open({pidfile!r} + ".part", "w") as f:
                    f.write(str(os.getpid()))
                os.rename({pidfile!r} + ".part", {pidfile!r})
                time.sleep(600)
            os._exit(0)
        time.sleep(600)  # the try is still running when local mode is killed

    with DAG(dag_id="escape", schedule="@once", start_date=datetime.datetime(2024, 1, 1)):
        PythonOperator(task_id="escape", python_callable=escape)
"""


def _descendants(root: int) -> set[int]:
    parents: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = Path(f"/proc/{name}/stat").read_text()
            except OSError:
                continue
            parents[int(name)] = int(stat.rsplit(")", 1)[1].split()[1])
    tree = {root}
    while more := {pid for pid, ppid in parents.items() if ppid in tree} - tree:
        tree |= more
    return tree - {root}


def _alive(pids: set[int]) -> set[int]:
    running = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            running.add(pid)
    return running


def test_kill_9_of_local_mode_ends_its_processes_and_what_a_running_try_started(tmp_path: Path) -> None:
    dags = tmp_path / "dags"
    dags.mkdir()
    pidfile = tmp_path / "escapee.pid"
    write_dag(dags, "escape.py", DAG.format(pidfile=str(pidfile)))
    env = {**os.environ, "UPDRAFT_HOME": str(tmp_path / "home")}
    env.pop("AWS_ENDPOINT_URL", None)
    system = subprocess.Popen([*UPDRAFT, "local", "--dags-folder", str(dags), "--unpause", "--tick-seconds", "1",
                               "--workers", "2", "--state-dir", str(tmp_path / "state")],
                              cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    escapee = None
    try:
        eventually(pidfile.exists, timeout=90)
        escapee = int(pidfile.read_text())
        started = _descendants(system.pid) | {escapee}  # the escapee is no longer below the system's process
        assert escapee in _alive(started)
    finally:
        system.send_signal(signal.SIGKILL)
        system.wait()
    try:
        eventually(lambda: not _alive(started), timeout=20)
    finally:
        for pid in _alive(started if escapee else set()):
            os.kill(pid, signal.SIGKILL)
