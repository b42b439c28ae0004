"""Keep what a process of Updraft's own holds out of reach of user code running as the same user.

On Lambda every process of an execution environment runs as one user, so the kernel's rule for same-user
access is what stands between user code (a DAG file's top level, a task, a callback, a trigger) and the
credentials, settings and memory of the processes that run it: a same-user process may read another's
``/proc/<pid>/environ`` and ``/proc/<pid>/mem``, and ``ptrace`` it, unless that process is *non-dumpable*.

So every process of Updraft's that holds credentials or serves user code calls :func:`make_undumpable` before any
user code can run: the Lambda handlers at import (so the Lambda runtime's process, and local mode's worker fork
server, which preloads the worker handler, and every worker forked from it), the `updraft` CLI at start, the
task server and the parse fork server at start. A fork keeps the flag, so every child forked to run user code
starts non-dumpable too: one try's code cannot read a concurrent try's process, nor a parse its sibling's. An
``exec`` resets it (a task's ``bash`` or ``python`` subprocess is dumpable again, holding only what its try
gave it). Root (``CAP_SYS_PTRACE``) is not stopped by this: deployments run user code as a non-root user,
as Lambda always does.

The cost to user code, as a non-root user: its own Python process cannot open ``/proc/self/environ`` nor reopen
its descriptors through ``/proc/self/fd`` (so ``open("/dev/stdout")`` is refused; ``sys.stdout``, ``os.environ``
and subprocesses, dumpable again after ``exec``, are unaffected).
"""

from __future__ import annotations

import contextlib
import sys

_PR_SET_DUMPABLE = 4


def _prctl(option: int, value: int = 0) -> int:
    import ctypes  # here, not at import: a handler's cold start pays for ctypes only where prctl exists

    return int(ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0))


def make_undumpable() -> None:
    """Make this process (and the children it forks from now on) non-dumpable: same-user processes can no longer
    read its ``/proc/<pid>/environ`` or memory, nor ``ptrace`` it. Linux only; elsewhere nothing changes."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            _prctl(_PR_SET_DUMPABLE, 0)

