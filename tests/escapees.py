"""A process that user code leaves behind on purpose, and how a test finds it (issue 34: nothing outlives its try
or its parse).

``ESCAPE`` is source for a DAG file or a task: ``escape(marker)`` does ``fork(); setsid(); fork()``, so the
process it leaves is in neither the caller's session nor its process group and its parent is gone; that process
ignores SIGTERM, names itself ``marker`` (``/proc/<pid>/comm``, inherited by its forks) and keeps forking for a
while, each child in a session of its own. ``survivors(marker)`` lists the live processes so named. The test side
gets the same functions by executing the same source.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import time

ESCAPE = '''
import os as _os, signal as _signal, time as _time

def survivors(marker):
    """The live processes named ``marker`` (zombies run nothing: not counted)."""
    found = []
    for entry in _os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/comm") as comm:
                if comm.read().strip() != marker:
                    continue
            with open(f"/proc/{entry}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    continue
        except OSError:
            continue
        found.append(int(entry))
    return found

def escape(marker, forks=20):
    """fork, setsid, fork: leaves a process named ``marker`` that forks ``forks`` more; returns once it runs."""
    if _os.fork() == 0:
        try:
            _os.setsid()
            if _os.fork() == 0:
                _signal.signal(_signal.SIGTERM, _signal.SIG_IGN)
                with open("/proc/self/comm", "w") as comm:
                    comm.write(marker)
                for _ in range(forks):
                    if _os.fork() == 0:
                        _os.setsid()
                        break
                    _time.sleep(0.02)
                _time.sleep(1000)
        finally:
            _os._exit(0)
    _os.wait()
    deadline = _time.monotonic() + 5
    while not survivors(marker) and _time.monotonic() < deadline:
        _time.sleep(0.01)
'''

_namespace: dict = {}
exec(ESCAPE, _namespace)


def new_marker() -> str:
    """A fresh process name (a comm holds 15 characters)."""
    return "esc" + secrets.token_hex(6)


def survivors(marker: str) -> list[int]:
    return _namespace["survivors"](marker)


def gone_within(marker: str, seconds: float) -> float | None:
    """How long until no process named ``marker`` runs, or None if some still run after ``seconds``."""
    started = time.monotonic()
    while survivors(marker):
        if time.monotonic() - started > seconds:
            return None
        time.sleep(0.01)
    return time.monotonic() - started


def kill_survivors(marker: str) -> None:
    """A failed test's cleanup: SIGKILL every process named ``marker`` until none is left (they fork)."""
    for _ in range(100):
        found = survivors(marker)
        if not found:
            return
        for pid in found:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)
