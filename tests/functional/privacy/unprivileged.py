"""Run a scenario as a non-root user, and the probe user code runs in it to look for what it must not reach.

On Lambda every process of an execution environment runs as one non-root user, so what one process may read of
another is decided by the kernel's same-user rules (``updraft.process_guard``). The suite runs as root, whom those
rules do not stop, so a scenario runs as uid/gid 65534 through ``setpriv``, keeping only
``CAP_DAC_READ_SEARCH`` so that it can reach the interpreter and the checkout wherever they are installed (under
``/root`` here). That capability lets it read any *file*; reading another process's ``environ`` or memory also
needs ``ptrace`` access, which it does not grant: so the probe is, if anything, stronger than Lambda's user.
Run by a non-root user, the scenario simply runs as that user.

What stays readable, by design of the platform: a process that user code *executes* (a task's ``bash``, a
subprocess) is dumpable again after ``exec`` and holds only what its try or parse gave it (the DAG-code role's
credentials); the probe does not count another probe's grandchild.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
UID = 65534
MARKER = "AKIAUPDRAFTOWNSECRET"  # in the environment of every process of Updraft's in the scenario


def unprivileged(argv: list[str]) -> list[str]:
    """``argv`` to run as a non-root user (see the module notes); skips when that cannot be done here."""
    if os.geteuid() != 0:
        return argv
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv (util-linux): cannot run the scenario as a non-root user")
    return [setpriv, f"--reuid={UID}", f"--regid={UID}", "--clear-groups", "--inh-caps=+dac_read_search",
            "--ambient-caps=+dac_read_search", *argv]


def python_path() -> str:
    """``PYTHONPATH`` for the scenario: this checkout's ``updraft`` and ``functions``, whatever the venv points to."""
    import updraft

    return os.pathsep.join([str(Path(updraft.__file__).resolve().parents[1]), str(ROOT)])


@contextlib.contextmanager
def scenario_folder() -> Iterator[Path]:
    """A folder the scenario's user can write and reach (under ``/tmp``: pytest's own are private to root),
    removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix="updraft-privacy-", dir="/tmp"))
    try:
        path.chmod(0o777)
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


# User code: ``probe(out, where)`` looks at every process of the scenario (the oldest ancestor of its user and all
# that ancestor started) but itself and its own descendants, for the
# marker in its environment and for its memory (opening ``/proc/<pid>/mem`` needs ptrace-attach access), then
# starts a grandchild (a fresh interpreter, as a task's subprocess is) that looks the same way.
PROBE = r'''
def probe(out, where, spawn=True):
    import json, os, subprocess, sys

    def status(pid):
        fields = dict(line.split(":", 1) for line in open(f"/proc/{pid}/status").read().splitlines() if ":" in line)
        return int(fields["Uid"].split()[0]), int(fields["PPid"])

    me, uid, parents = os.getpid(), os.getuid(), {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                owner, ppid = status(int(name))
            except (OSError, KeyError, ValueError):
                continue
            if owner == uid:
                parents[int(name)] = ppid
    def tree(top):
        pids = {top}
        while True:
            more = {pid for pid, ppid in parents.items() if ppid in pids} - pids
            if not more:
                return pids
            pids |= more

    top = me
    while parents.get(top) in parents:  # the scenario: the oldest ancestor of this user, and all it started
        top = parents[top]
    found = {"where": where, "pid": me, "uid": uid, "looked": 0, "environ": [], "mem": []}
    for pid in sorted(tree(top) - tree(me)):
        try:
            if open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")[-2:-1] == [b"updraft-probe-grandchild"]:
                continue  # another probe's grandchild: user code's own exec'd process (see the module notes)
        except OSError:
            continue
        found["looked"] += 1
        try:
            if MARKER.encode() in open(f"/proc/{pid}/environ", "rb").read():
                found["environ"].append(pid); found.setdefault("what", {})[pid] = open(f"/proc/{pid}/cmdline", "rb").read()[:300].decode()
        except OSError:
            pass
        try:
            with open(f"/proc/{pid}/mem", "rb"):
                found["mem"].append(pid)
                found.setdefault("what", {})[pid] = open(f"/proc/{pid}/cmdline", "rb").read()[:200].decode()
        except OSError:
            pass
    with open(out, "a") as f:
        f.write(json.dumps(found) + "\n")
    if spawn:
        code = f"MARKER = {MARKER!r}\n" + PROBE + f"\nprobe({out!r}, {where + ' (grandchild)'!r}, spawn=False)\n"
        subprocess.run([sys.executable, "-c", code, "updraft-probe-grandchild"], check=True, timeout=60)
'''


def probe_code() -> str:
    """The probe as Python source, defining ``MARKER``, ``PROBE`` and ``probe``."""
    return f"MARKER = {MARKER!r}\nPROBE = {PROBE!r}\n{PROBE}\n"


def findings(out: Path) -> dict[str, dict[str, Any]]:
    """What each probe found, by where it ran."""
    lines = out.read_text().splitlines() if out.exists() else []
    return {entry["where"]: entry for entry in map(json.loads, lines)}


def assert_nothing_reached(found: dict[str, Any]) -> None:
    """The probe ran as a non-root user, looked at Updraft's processes, and read none of them."""
    if os.geteuid() == 0:
        assert found["uid"] == UID, found
    assert found["looked"] >= 2, found  # at least the processes that started it
    assert found["environ"] == [], f"{found['where']} read the environment of {found['environ']}"
    assert found["mem"] == [], f"{found['where']} could open the memory of {found.get('what')}"
