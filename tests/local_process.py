"""`updraft local` as a process of its own, as a user runs it, and a stop that never leaves it running.

A test that starts the system starts it in a session of its own (``start_new_session``), so that the process
group holds it and every process it started that did not leave the group, and with SIGINT ignored, as a
background job of a non-interactive shell inherits it (a script's ``updraft local &``, a CI runner's job): the
system must install its own handler to stop on Ctrl-C's signal, whoever started the test run. :func:`stop` signals it as Ctrl-C
does; a system still running ``timeout`` seconds later is killed with its whole group, and the test fails saying
so: a system that ignores Ctrl-C is a bug, and one left running slows every later test on the machine.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from typing import Any

UPDRAFT = [sys.executable, "-c", "from updraft.cli import main; main()"]
# `exec` keeps an ignored signal ignored: the shell's pid becomes updraft's, with SIGINT ignored from its start.
_SIGINT_IGNORED = ["sh", "-c", 'trap "" INT; exec "$@"', "sh"]


def start(args: list[str], **popen: Any) -> subprocess.Popen[Any]:
    """``updraft <args>`` in a new session (its pid is its process group's id), SIGINT inherited ignored;
    ``popen`` as for ``Popen``."""
    return subprocess.Popen([*_SIGINT_IGNORED, *UPDRAFT, *args], start_new_session=True, **popen)


def stop(process: subprocess.Popen[Any], *, signum: int = signal.SIGINT, timeout: float = 60.0) -> str:
    """Send ``signum`` to the system and wait for it to end; return its output (``""`` if not captured).

    If it has not ended after ``timeout`` seconds, SIGKILL its process group and raise ``AssertionError``.
    """
    if process.poll() is None:
        process.send_signal(signum)
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        raise AssertionError(f"updraft still ran {timeout:g} s after {signal.Signals(signum).name}; killed. "
                             f"Its output:\n{_text(output)[-5000:]}") from None
    return _text(output)


def _text(output: str | bytes | None) -> str:
    if isinstance(output, bytes):
        return output.decode(errors="replace")
    return output or ""
