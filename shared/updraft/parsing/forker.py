"""Forks one child per DAG file from the current process and multiplexes them: the parent's side of isolation.

Runs either in the caller's process (``IsolatedParser(fork_server=False)``, a custom target in tests) or inside
the fork server, a separate lean process whose size never grows with results. Each child runs
:func:`~updraft.parsing.child.child_main` and leaves with ``os._exit``; the parent reads its result pipe, kills it
past its deadline, reaps it and hands back a :class:`~updraft.parsing.outcome.Finished` record.
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

from updraft.parsing.child import ChildTarget, child_main
from updraft.parsing.options import FileJob, ParseOptions
from updraft.parsing.outcome import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, Finished

# After the soft timeout (SIGALRM inside the child, which yields a traceback
# pointing at the stuck line) the parent waits this long before SIGKILL.
KILL_GRACE_S = 0.5


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
    buffer: bytearray = field(default_factory=bytearray)
    killed_for_timeout: bool = False


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
        self.options = options
        self.target = target
        self.prepared = prepared
        self.selector = selectors.DefaultSelector()
        self.running: dict[int, _Child] = {}

    def spawn(self, index: int, job: FileJob) -> None:
        read_fd, write_fd = os.pipe()
        out_fd = _new_capture()
        # Keeps the parent's own output ordered around the children's work.
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        started = time.monotonic()
        pid = os.fork()
        if pid == 0:  # child
            code = EXIT_INTERNAL
            try:
                os.close(read_fd)
                child_main(job, self.options, self.target, write_fd, out_fd, self.prepared)
                code = EXIT_OK
            except KeyboardInterrupt:  # re-raised by the loader, as Airflow does: not an internal failure
                code = EXIT_INTERRUPTED
                with contextlib.suppress(BaseException):
                    traceback.print_exc()
            except BaseException:
                with contextlib.suppress(BaseException):
                    traceback.print_exc()
            finally:
                os._exit(code)
        os.close(write_fd)
        deadline = started + self.options.timeout_s + KILL_GRACE_S + 0.05 * self.options.timeout_s
        child = _Child(index, job, pid, read_fd, out_fd, started, deadline)
        self.running[read_fd] = child
        self.selector.register(read_fd, selectors.EVENT_READ, child)

    def next_deadline(self) -> float | None:
        return min((c.deadline for c in self.running.values()), default=None)

    def handle(self, key: selectors.SelectorKey) -> Finished | None:
        """Read from a ready child pipe; the finished result once it hits EOF."""
        child = key.data
        # A pipe never holds more than 64 KiB; a bigger buffer only costs an mmap.
        chunk = os.read(child.result_fd, 65536)
        if chunk:
            child.buffer += chunk
            return None
        return self._reap(child)

    def kill_overdue(self) -> list[Finished]:
        now = time.monotonic()
        done = []
        for child in [c for c in self.running.values() if now >= c.deadline]:
            child.killed_for_timeout = True
            with contextlib.suppress(ProcessLookupError):
                os.kill(child.pid, signal.SIGKILL)
            done.append(self._reap(child))
        return done

    def close(self) -> None:
        for child in list(self.running.values()):
            with contextlib.suppress(ProcessLookupError):
                os.kill(child.pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(child.pid, 0)
            os.close(child.result_fd)
            os.close(child.out_fd)
        self.running.clear()
        self.selector.close()

    def _reap(self, child: _Child) -> Finished:
        self.selector.unregister(child.result_fd)
        del self.running[child.result_fd]
        _pid, status, usage = os.wait4(child.pid, 0)
        elapsed = time.monotonic() - child.started
        os.close(child.result_fd)
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
