"""Forks one child per DAG file from the current process and multiplexes them: the parent's side of isolation.

Runs either in the caller's process (``IsolatedParser(fork_server=False)``, a custom target in tests) or inside
the fork server, a separate lean process whose size never grows with results. Each child runs
:func:`~updraft.parsing.child.child_main` in its own process group and leaves with ``os._exit``; the parent reads
its result pipe, kills it past its deadline, kills its whole process group when it ends (whatever the file
started dies with the parse, success included), reaps it and hands back a
:class:`~updraft.parsing.outcome.Finished` record. The child is a subreaper and kills every process below it
before it leaves; one killed from here (a timeout) is stopped and its tree killed first (``updraft.reaper``). The
orphans of a child that ended without its sweep (``os._exit`` in the file, a crash) go to the nearest subreaper:
the fork server, which kills them (``forkserver.serve``); forking from the caller's process, to whatever reaps
the caller's orphans (init), so only the fork server closes that gap.

The end of a child is watched on a pidfd, not on the result pipe's end-of-file: a process the file forked keeps
the pipe's write end open, and waiting for EOF would turn a valid DAG into a timeout.
"""

from __future__ import annotations

import contextlib
import gc
import os
import selectors
import signal
import sys
import tempfile
import time
import traceback
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from updraft.parsing.child import ChildTarget, child_main, user_tasks
from updraft.parsing.options import FileJob, ParseOptions
from updraft.parsing.outcome import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, Finished
from updraft.process_guard import make_undumpable
from updraft.reaper import end_descendants, kill_tree

# After the soft timeout (SIGALRM inside the child, which yields a traceback
# pointing at the stuck line) the parent waits this long before SIGKILL.
KILL_GRACE_S = 0.5
# How long a count of the user's processes (the base of each child's RLIMIT_NPROC) is reused.
USER_TASKS_REUSE_S = 2.0


def _new_capture() -> int:
    """An anonymous in-memory file for the child's stdout/stderr.

    The parent keeps its own descriptor, so it can still read what a child
    printed after that child was killed (timeouts, crashes).
    """
    try:
        return os.memfd_create("updraft-parse-output")
    except (AttributeError, OSError):  # pragma: no cover - non-Linux fallback
        fd, name = tempfile.mkstemp(prefix="updraft-parse-")
        os.unlink(name)
        return fd


@dataclass
class _Child:
    index: int
    job: FileJob
    pid: int
    result_fd: int
    out_fd: int
    started: float
    deadline: float
    pidfd: int | None = None
    buffer: bytearray = field(default_factory=bytearray)
    killed_for_timeout: bool = False


def _open_pidfd(pid: int) -> int | None:
    """A descriptor that becomes readable when ``pid`` exits (Linux 5.3+), or None where there is none."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):  # pragma: no cover - older kernels: the pipe's EOF is the only signal
        return None


def _kill_group(pgid: int) -> None:
    """SIGKILL a child's process group: the child and everything it started that stayed in the group.

    Called before the child is reaped, so the group id cannot have been reused by another process. The child
    itself is killed by pid too, in case it died before it made its group.
    """
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pgid, signal.SIGKILL)


def _kill(pid: int) -> None:
    """Kill a child that may still run with everything below it (``reaper.kill_tree``: the processes the file
    started that left the child's group), then its group (the ones that stayed in it, whoever reaps them now)."""
    kill_tree(pid)
    _kill_group(pid)


# Reads of a finished child's pipe at most: bytes a leftover writer keeps adding are not waited for.
_MAX_DRAIN_READS = 1024


def _read_output(fd: int, limit: int) -> str:
    """What the child printed, keeping the end (where errors are) if it is long."""
    try:
        size = os.fstat(fd).st_size
        if size <= limit:
            data = os.pread(fd, size, 0)
            prefix = b""
        else:
            data = os.pread(fd, limit, size - limit)
            prefix = f"[... {size - limit} bytes of earlier output dropped ...]\n".encode()
    except OSError:
        return ""
    return (prefix + data).decode("utf-8", errors="replace")


class Forker:
    """Forks one child per job from *this* process and multiplexes them.

    Runs either in the caller's process (``fork_server=False``) or inside the
    fork server, a separate lean process whose size never grows with results.
    """

    def __init__(self, options: ParseOptions, target: ChildTarget, *, prepared: bool = False) -> None:
        make_undumpable()  # the children inherit it: a DAG file cannot read this process nor a sibling's
        self.options = options
        self.target = target
        self.prepared = prepared
        self.selector = selectors.DefaultSelector()
        self.running: dict[int, _Child] = {}
        self._user_tasks = (0, -USER_TASKS_REUSE_S)  # (count, when)

    def _user_tasks_now(self) -> int:
        count, when = self._user_tasks
        if self.options.max_processes and time.monotonic() - when >= USER_TASKS_REUSE_S:
            count = user_tasks()
            self._user_tasks = (count, time.monotonic())
        return count

    def spawn(self, index: int, job: FileJob) -> None:
        read_fd, write_fd = os.pipe()
        out_fd = _new_capture()
        # Keeps the parent's own output ordered around the children's work.
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        tasks = self._user_tasks_now()
        started = time.monotonic()
        pid = os.fork()
        if pid == 0:  # child
            code = EXIT_INTERNAL
            try:
                os.close(read_fd)
                child_main(job, self.options, self.target, write_fd, out_fd, self.prepared, tasks)
                code = EXIT_OK
            except KeyboardInterrupt:  # re-raised by the loader, as Airflow does: not an internal failure
                code = EXIT_INTERRUPTED
                with contextlib.suppress(BaseException):
                    traceback.print_exc()
            except BaseException:
                with contextlib.suppress(BaseException):
                    traceback.print_exc()
            finally:
                with contextlib.suppress(BaseException):
                    end_descendants()  # nothing the file started outlives its parse
                os._exit(code)
        os.close(write_fd)
        deadline = started + self.options.timeout_s + KILL_GRACE_S + 0.05 * self.options.timeout_s
        child = _Child(index, job, pid, read_fd, out_fd, started, deadline, _open_pidfd(pid))
        self.running[read_fd] = child
        self.selector.register(read_fd, selectors.EVENT_READ, child)
        if child.pidfd is not None:
            self.selector.register(child.pidfd, selectors.EVENT_READ, child)

    def pids(self) -> set[int]:
        """The running children's pids (not yet reaped, so none is reused)."""
        return {child.pid for child in self.running.values()}

    def next_deadline(self) -> float | None:
        return min((c.deadline for c in self.running.values()), default=None)

    def handle(self, key: selectors.SelectorKey) -> Finished | None:
        """Read from a ready child pipe; the finished result once it hits EOF or the child has exited."""
        child: _Child = key.data
        if self.running.get(child.result_fd) is not child:
            return None  # its pipe and its pidfd were both ready: the first one reaped it
        if key.fd == child.pidfd:
            self._drain(child)
            return self._reap(child)
        # A pipe never holds more than 64 KiB; a bigger buffer only costs an mmap.
        chunk = os.read(child.result_fd, 65536)
        if chunk:
            child.buffer += chunk
            return None
        if child.pidfd is not None:
            # The child is leaving (or closed its pipe): its end comes on the pidfd. Reaped now, it could still be
            # running, and a running child costs a scan of its tree to kill (``reaper.kill_tree``).
            self.selector.unregister(child.result_fd)
            return None
        return self._reap(child)

    def _drain(self, child: _Child) -> None:
        """What an exited child left in its pipe, without waiting for an EOF a leftover process may hold off."""
        _kill_group(child.pid)
        os.set_blocking(child.result_fd, False)
        for _ in range(_MAX_DRAIN_READS):
            try:
                chunk = os.read(child.result_fd, 65536)
            except BlockingIOError:
                return
            if not chunk:
                return
            child.buffer += chunk

    def kill_overdue(self) -> list[Finished]:
        now = time.monotonic()
        done = []
        for child in [c for c in self.running.values() if now >= c.deadline]:
            child.killed_for_timeout = True
            done.append(self._reap(child))
        return done

    def close(self) -> None:
        for child in list(self.running.values()):
            _kill(child.pid)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(child.pid, 0)
            os.close(child.result_fd)
            os.close(child.out_fd)
            if child.pidfd is not None:
                os.close(child.pidfd)
        self.running.clear()
        self.selector.close()

    def _reap(self, child: _Child) -> Finished:
        with contextlib.suppress(KeyError):  # unregistered already at its end-of-file
            self.selector.unregister(child.result_fd)
        del self.running[child.result_fd]
        # The whole tree, success included: nothing the file started outlives its parse.
        _kill(child.pid)
        _pid, status, usage = os.wait4(child.pid, 0)
        elapsed = time.monotonic() - child.started
        os.close(child.result_fd)
        if child.pidfd is not None:
            self.selector.unregister(child.pidfd)
            os.close(child.pidfd)
        logs = _read_output(child.out_fd, self.options.max_log_bytes)
        os.close(child.out_fd)
        return Finished(
            child.index,
            child.job,
            child.killed_for_timeout,
            status,
            usage.ru_maxrss,
            elapsed,
            logs,
            bytes(child.buffer),
        )

    def run(self, jobs: Sequence[FileJob]) -> Iterator[Finished]:
        """Run every job, ``workers`` at a time, yielding results as children finish."""
        queue = deque(range(len(jobs)))
        # Objects alive now are never freed in a child: freezing them keeps the
        # collector from touching (and so copying) the parent's pages after fork.
        gc.freeze()
        try:
            while queue or self.running:
                while queue and len(self.running) < self.options.workers:
                    index = queue.popleft()
                    self.spawn(index, jobs[index])
                deadline = self.next_deadline()
                wait = max(0.0, deadline - time.monotonic()) if deadline is not None else None
                for key, _events in self.selector.select(wait):
                    finished = self.handle(key)
                    if finished is not None:
                        yield finished
                yield from self.kill_overdue()
        finally:
            self.close()
            gc.unfreeze()
