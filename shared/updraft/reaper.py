"""The processes below a process, found and killed: nothing user code starts outlives its try or its parse.

User code runs in a child forked per job (a try's child of the task server, a DAG file's child of the parse fork
server). Each such child, and each server, makes itself a *child subreaper* (:func:`become_subreaper`, Linux's
``PR_SET_CHILD_SUBREAPER``): a process whose parent ends is re-parented to its nearest living subreaper ancestor
instead of init, so neither ``setsid`` nor a double fork takes a process out of the tree. Then:

- the child kills every process below it before it leaves (:func:`end_descendants`);
- a child ended from outside while it still runs (a timeout) is stopped, its tree killed, then it
  (:func:`kill_tree`);
- what still reaches a server, the orphans of a child that ended without its own sweep (``os._exit`` in user
  code, a crash, a kill, a child that turned its subreaper flag off), is killed there (:func:`kill_strays`).

Processes are found by their parent pid in ``/proc/<pid>/stat`` (``/proc/<pid>/task/*/children`` needs a kernel
option that Firecracker's kernels leave out). Every kill is SIGKILL, which nothing can catch or ignore, repeated
until a scan finds no live process left: one forking while the kill happens is caught by the next round. Zombies
count as gone (they run nothing); the ones that are this process's children are reaped.

What this does not stop: a process of the same user killing a server itself (its children then go to init);
a cgroup would, where the platform gives one to the process (Lambda does not). Elsewhere than Linux there is no
subreaper and no ``/proc``: :func:`become_subreaper` answers False and the kills find nothing, so only the callers'
process-group kills stop what user code starts.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time
from collections.abc import Callable, Collection

_PR_SET_CHILD_SUBREAPER = 36
# How long a kill keeps scanning for processes that have not died yet (one in uninterruptible sleep, a fork in
# flight) before it gives up and answers them.
KILL_WITHIN_S = 5.0

# pid -> (parent pid, running): a zombie or a dead process is not running.
_Table = dict[int, tuple[int, bool]]


def become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux); False where the platform has none."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _processes() -> _Table:
    """Every process's parent and whether it runs, from ``/proc`` (empty where there is none)."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return {}
    table: _Table = {}
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            fd = os.open(f"/proc/{entry}/stat", os.O_RDONLY)
            try:
                raw = os.read(fd, 512)
            finally:
                os.close(fd)
            # "pid (comm) state ppid ...": comm may hold spaces and parentheses, the last ")" ends it.
            state, ppid = raw[raw.rindex(b")") + 2 :].split(b" ", 2)[:2]
            table[int(entry)] = (int(ppid), state not in (b"Z", b"X", b"x"))
        except (OSError, ValueError):
            continue  # gone meanwhile
    return table


def _below(table: _Table, roots: Collection[int]) -> list[int]:
    """The processes below ``roots`` in ``table`` (roots excluded), parents before their children."""
    children: dict[int, list[int]] = {}
    for pid, (ppid, _running) in table.items():
        children.setdefault(ppid, []).append(pid)
    found: list[int] = []
    frontier = list(roots)
    while frontier:
        frontier = [child for parent in frontier for child in children.get(parent, ())]
        found.extend(frontier)
    return found


def _kill_rounds(pick: Callable[[_Table], list[int]], within: float) -> list[int]:
    """SIGKILL what ``pick`` chooses from a fresh scan, round after round, until it chooses no running process;
    this process's children among them are reaped. Answers the ones still running after ``within`` seconds, and
    at once the ones this process may not signal (a set-user-ID program the user code ran)."""
    me = os.getpid()
    deadline = time.monotonic() + within
    refused: set[int] = set()
    while True:
        table = _processes()
        victims = pick(table)
        running = [pid for pid in victims if table[pid][1] and pid not in refused]
        for pid in running:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            except PermissionError:
                refused.add(pid)
        for pid in victims:
            if table[pid][0] == me:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)
        if not set(running) - refused or time.monotonic() > deadline:
            return sorted(refused.union(running))
        time.sleep(0.001)  # a SIGKILLed process takes a moment to become a zombie


def _has_children() -> bool:
    """Whether this process has a child still running (zombie children are reaped on the way): one system call
    when it has none, the common end of a job."""
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return True


def descendants(root: int) -> list[int]:
    """The processes below ``root`` now (a zombie not yet waited for included), parents before their children,
    from ``/proc`` (none where there is none)."""
    return _below(_processes(), [root])


def end_descendants(within: float = KILL_WITHIN_S) -> list[int]:
    """Kill every process below this one and reap the ones that come back to it: called by a job's child (a
    subreaper) as it ends. Reaps any child of this process, so only for a process that is about to leave.
    Answers the processes still running after ``within`` seconds (none unless one is stuck in the kernel)."""
    if not _has_children():
        return []  # a subreaper without children has no descendants at all
    me = os.getpid()
    return _kill_rounds(lambda table: _below(table, [me]), within)


def kill_tree(pid: int, within: float = KILL_WITHIN_S) -> list[int]:
    """Stop ``pid`` (a child of this process, not yet reaped), kill every process below it, then it.

    Stopped first so that it forks nothing more; it is a subreaper, so while it lives everything its code started
    stays below it. A child that has already ended has nothing below it any more (its orphans went to the nearest
    subreaper, where :func:`kill_strays` finds them): then this costs one system call and kills nothing."""
    try:
        if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            return []
    except ChildProcessError:
        return []
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGSTOP)
    survivors = _kill_rounds(lambda table: _below(table, [pid]), within)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    return survivors


def kill_strays(keep: Collection[int] = (), within: float = KILL_WITHIN_S) -> list[int]:
    """Kill every child of this process that is not in ``keep`` (the jobs' children it runs), everything below
    them, and reap them: a server's sweep for the orphans that came back to it. Answers the processes still
    running after ``within`` seconds. With nothing to keep and no child, it costs one system call."""
    if not keep and not _has_children():
        return []
    me = os.getpid()

    def strays(table: _Table) -> list[int]:
        mine = [pid for pid, (ppid, _running) in table.items() if ppid == me and pid not in keep]
        return mine + _below(table, mine)

    return _kill_rounds(strays, within)
