"""The fork server: a lean, warm process that forks one child per DAG file.

Why a separate process: on the Firecracker VMs this runs on, ``fork()`` plus
the copy-on-write faults that follow cost ~0.06 ms per MiB of the forking
process. A caller that has imported boto3 (the Lambda handler) or that holds
a thousand decoded DAGs (the CLI halfway through a folder) would make every
fork slower; the fork server imports only what DAG files need, never keeps a
result, and so forks at the same low cost for its whole life. It is started
once per ``IsolatedParser`` with the current interpreter and exits when its
stdin closes, so it cannot outlive its caller.

Wire format (pipes, one server per client, one request stream at a time):
client -> server: one JSON line per job ``{"r": run, "i": index, "path",
"rel", "folder", "version"}``. server -> client: one JSON line of metadata
``{"r", "i", "status", "timeout", "rss", "elapsed", "logs", "n"}`` followed by
exactly ``n`` bytes of the child's result JSON (length-prefixed, so nothing a
DAG file writes can break the framing).
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import json
import os
import select
import subprocess
import sys
import time
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import IO

import updraft
from updraft.parsing.child import default_target, prepare_forking_process
from updraft.parsing.forker import KILL_GRACE_S, Forker
from updraft.parsing.options import FileJob, ParseOptions
from updraft.parsing.outcome import Finished
from updraft.parsing.scrub import dag_code_environment, scrubbed
from updraft.parsing.warm import warm_up
from updraft.process_guard import make_undumpable
from updraft.reaper import become_subreaper, kill_strays
from updraft.requirements.dag_packages import pythonpath as dag_code_pythonpath

# How long the client waits for *any* message before deciding the server is
# wedged: beyond the per-file timeout and kill grace, the server always has
# something to say.
_WATCHDOG_EXTRA_S = 30.0
# How often at most a busy server kills the orphans that came back to it (a scan of /proc costs ~15 µs a process).
SWEEP_EVERY_S = 1.0


def _job_line(run: int, index: int, job: FileJob, env: dict[str, str] | None = None) -> bytes:
    data: dict[str, object] = {"r": run, "i": index, "path": job.path, "rel": job.relative_path,
                               "folder": job.dags_folder}
    if job.file_version is not None:
        data["version"] = job.file_version
    if job.timetable_context:
        data["timetables"] = job.timetable_context
    if env:  # the DAG-code role's credentials, for the child's environment only (never in the server's argv)
        data["env"] = env
    return json.dumps(data, separators=(",", ":")).encode() + b"\n"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


# --------------------------------------------------------------------------- server


def serve(options: ParseOptions, in_fd: int, out_fd: int) -> None:
    """The server loop: read jobs, fork children, send results, until stdin closes.

    The server is a subreaper (``updraft.reaper``): the orphans of a child that ended without killing what its
    file started (``os._exit`` in the file, a crash, a kill) come back to it, and it kills every child of its own
    that is not a running DAG-file child before it sends a result that leaves it idle (one system call when
    there is none), so none of it outlives the request or meets the next one; while children keep running
    (a folder's parse), at most every ``SWEEP_EVERY_S``, since each sweep scans ``/proc``."""
    become_subreaper()
    forker = Forker(options, default_target, prepared=True)
    forker.selector.register(in_fd, 1, "jobs")  # 1 == selectors.EVENT_READ
    queue: deque[tuple[int, int, FileJob]] = deque()
    # Children are numbered per server ("slots"); a client's indexes repeat across runs.
    owners: dict[int, tuple[int, int]] = {}
    pending = bytearray()
    next_slot = 0
    swept = time.monotonic()

    def send(finished: Finished) -> None:
        run, index = owners.pop(finished.index)
        meta = {
            "r": run,
            "i": index,
            "status": finished.status,
            "timeout": finished.killed_for_timeout,
            "rss": finished.peak_rss_kb,
            "elapsed": finished.elapsed,
            "logs": finished.logs,
            "n": len(finished.payload),
        }
        _write_all(out_fd, json.dumps(meta, separators=(",", ":")).encode() + b"\n" + finished.payload)

    try:
        while True:
            if queue and len(forker.running) < options.workers:
                gc.freeze()  # see Forker.run: keep the collector off inherited pages
            while queue and len(forker.running) < options.workers:
                run, index, job = queue.popleft()
                owners[next_slot] = (run, index)
                forker.spawn(next_slot, job)
                next_slot += 1
            deadline = forker.next_deadline()
            wait = max(0.0, deadline - time.monotonic()) if deadline is not None else None
            done: list[Finished] = []
            for key, _events in forker.selector.select(wait):
                if key.data != "jobs":
                    finished = forker.handle(key)
                    if finished is not None:
                        done.append(finished)
                    continue
                chunk = os.read(in_fd, 65536)
                if not chunk:
                    return  # the client is gone: nobody wants the remaining results
                pending.extend(chunk)
                while (end := pending.find(b"\n")) >= 0:
                    data = json.loads(pending[:end])
                    del pending[: end + 1]
                    job = FileJob(data["path"], data["rel"], data["folder"], data.get("version"),
                                  tuple(sorted(data.get("env", {}).items())), data.get("timetables", ""))
                    queue.append((data["r"], data["i"], job))
            done.extend(forker.kill_overdue())
            if done and (not forker.running or time.monotonic() - swept >= SWEEP_EVERY_S):
                kill_strays(keep=forker.pids())
                swept = time.monotonic()
            for finished in done:
                send(finished)
    finally:
        forker.close()
        kill_strays()


def main() -> None:
    options = ParseOptions(**json.loads(sys.argv[1]))
    # The protocol owns the real stdout; anything else that prints (a noisy
    # import) goes to stderr instead of corrupting it.
    out_fd = os.dup(1)
    os.dup2(2, 1)
    prepare_forking_process()
    warm_up()
    serve(options, 0, out_fd)


# --------------------------------------------------------------------------- client

_clients: list[ForkServerClient] = []


@atexit.register
def _close_all() -> None:
    for client in list(_clients):
        client.close()


def _pipes(proc: subprocess.Popen[bytes]) -> tuple[IO[bytes], IO[bytes]]:
    """The server's stdin and stdout: always there, since ``ForkServerClient.start`` opens both as pipes."""
    assert proc.stdin is not None and proc.stdout is not None
    return proc.stdin, proc.stdout


class ForkServerClient:
    """The caller's side: starts the server lazily and streams jobs through it."""

    def __init__(self, options: ParseOptions) -> None:
        self.options = options
        self.proc: subprocess.Popen[bytes] | None = None
        self._buffer = bytearray()
        self._run = 0

    def start(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            return
        # The server and so every child start without Updraft's settings and AWS secrets (see ``scrub``), and
        # cannot read them from this process either (the server's children are user code).
        make_undumpable()
        env = scrubbed(os.environ)
        root = str(Path(updraft.__file__).resolve().parents[1])
        env["PYTHONPATH"] = dag_code_pythonpath(root, os.environ)  # Updraft first, the DAG packages last
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "updraft.parsing.forkserver", json.dumps(asdict(self.options))],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            bufsize=0,
        )
        self._buffer = bytearray()
        _clients.append(self)

    def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        with contextlib.suppress(ValueError):
            _clients.remove(self)
        stdin, stdout = _pipes(proc)
        with contextlib.suppress(OSError):
            stdin.close()
        try:
            proc.wait(timeout=self.options.timeout_s + KILL_GRACE_S + 1)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        with contextlib.suppress(OSError):
            stdout.close()

    def _read_message(self, timeout: float) -> tuple[dict, bytes] | None:
        """The next reply, or None if the server died or went silent past ``timeout``."""
        assert self.proc is not None
        fd = _pipes(self.proc)[1].fileno()
        deadline = time.monotonic() + timeout
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                meta = json.loads(self._buffer[:end])
                total = end + 1 + meta["n"]
                if len(self._buffer) >= total:
                    payload = bytes(self._buffer[end + 1 : total])
                    del self._buffer[:total]
                    return meta, payload
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None
            self._buffer.extend(chunk)

    def run(self, jobs: Sequence[FileJob]) -> Iterator[Finished]:
        self.start()
        assert self.proc is not None
        self._run += 1
        run = self._run
        window = max(64, 8 * self.options.workers)
        watchdog = self.options.timeout_s + KILL_GRACE_S + _WATCHDOG_EXTRA_S
        env = dag_code_environment()
        sent = 0
        outstanding: set[int] = set()
        in_fd = _pipes(self.proc)[0].fileno()
        while sent < len(jobs) or outstanding:
            lines = []
            while sent < len(jobs) and len(outstanding) < window:
                lines.append(_job_line(run, sent, jobs[sent], env))
                outstanding.add(sent)
                sent += 1
            if lines:
                # A dead server shows up in the read below.
                with contextlib.suppress(BrokenPipeError):
                    _write_all(in_fd, b"".join(lines))
            message = self._read_message(watchdog)
            if message is None:
                # Which file took the server down is unknown: rerun the
                # unanswered ones one at a time, so only the culprit fails.
                lost = sorted(outstanding)
                outstanding.clear()
                self._stop()
                for index in lost:
                    yield self._run_alone(run, index, jobs[index], watchdog, env)
                assert self.proc is not None
                in_fd = _pipes(self.proc)[0].fileno()
                continue
            meta, payload = message
            if meta["r"] != run or meta["i"] not in outstanding:
                continue  # a late reply for an abandoned run
            outstanding.discard(meta["i"])
            yield Finished(
                meta["i"],
                jobs[meta["i"]],
                meta["timeout"],
                meta["status"],
                meta["rss"],
                meta["elapsed"],
                meta["logs"],
                payload,
            )

    def _run_alone(self, run: int, index: int, job: FileJob, watchdog: float, env: dict[str, str]) -> Finished:
        self.start()
        assert self.proc is not None
        with contextlib.suppress(BrokenPipeError):
            _write_all(_pipes(self.proc)[0].fileno(), _job_line(run, index, job, env))
        while (message := self._read_message(watchdog)) is not None:
            meta, payload = message
            if meta["r"] == run and meta["i"] == index:
                return Finished(
                    index, job, meta["timeout"], meta["status"], meta["rss"], meta["elapsed"], meta["logs"], payload
                )
        self._stop()
        self.start()
        note = (
            "the parse server stopped while this file was being parsed (the file may have killed it); "
            "the file was not parsed"
        )
        return Finished(index, job, False, -1, 0, 0.0, "", b"", note)

    def _stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        with contextlib.suppress(OSError):
            proc.kill()
        proc.wait()
        for stream in _pipes(proc):
            with contextlib.suppress(OSError):
                stream.close()
        with contextlib.suppress(ValueError):
            _clients.remove(self)


if __name__ == "__main__":
    main()
