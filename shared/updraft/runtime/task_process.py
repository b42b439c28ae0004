"""Where a try's user code runs: a child forked, per try, from a warm task server that never held credentials.

The task server is a fresh interpreter (``python -m updraft.runtime.task_process``) started by the worker's
``supervisor`` with a scrubbed environment (``parsing.scrub``: no ``AWS_*`` secrets, no ``UPDRAFT_*`` settings),
before and apart from any boto3 client of the worker. It makes itself non-dumpable and says so on its control
socket (``GUARDED``: the worker waits for that word before going on), imports the runtime and what DAG files
commonly need once, then waits on its control socket. For each try the worker sends one byte and the child's end
of a fresh socket pair (SCM_RIGHTS); the server forks, answers with the child's pid, and reaps it when it ends.
The child starts its own session (the worker kills its process group on a timeout or a lost heartbeat), becomes a
subreaper, closes the control socket, and runs the try with :func:`run_child`: the job (the dispatch, the run,
the DAGs folder, the DAG-code role's credentials) comes over its socket, the store is a ``store_proxy.StoreProxy``
over the same socket, the log goes back as it grows, and the ``TryResult`` last, as JSON. A child runs a callback
request's callbacks or one look at a polling trigger the same way (the job's ``kind``, :data:`_JOBS`). Nothing
the job starts outlives it: the child kills everything below it as it ends, and the server (a subreaper too)
kills the orphans of a child that was killed or left without doing so (``updraft.reaper``).

Why a fork server and not ``fork()`` of the worker: a forked worker's memory holds the worker's boto3 clients
and credentials (gc-reachable). Why not a fresh interpreter per try: it costs ~0.2 s of imports per try; a fork
of the warm server costs a few milliseconds (``bench/task_isolation_bench.py``).
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import gc
import os
import pickle
import select
import signal
import socket
import struct
import sys
import threading
import time
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

from updraft import reaper
from updraft.model.records import TIKey
from updraft.model.states import TaskInstanceState
from updraft.runtime.store_proxy import Channel, ProxyEmailSender, StoreProxy
from updraft.secrets.masker import redact_text

if TYPE_CHECKING:
    from updraft.scheduling import TryResult

PID = struct.Struct("!i")
# The server's first byte on its control socket: it is non-dumpable from now on (``supervisor`` waits for it).
GUARDED = b"g"
_PR_SET_PDEATHSIG = 1


class LogPieces:
    """What the try prints, on its way to the worker in batches, as a block-buffered stdout goes: a batch leaves
    when ``BATCH_CHARS`` have gathered, when the try flushes its stream (``print(..., flush=True)``), within
    ``BATCH_SECONDS`` otherwise (a thread sends what waits), and before the whole log. Each batch is masked here,
    as a whole. A message per write would cost more than the write (a million lines: minutes of messages); a try
    killed outright loses at most its last ``BATCH_SECONDS`` of output, as a killed process loses its unflushed
    stdout.

    A writer never waits for a send (a print in a signal handler that interrupted a send must not deadlock or
    interleave two messages): when a send is under way, its batch waits for the next one."""

    BATCH_CHARS = 64 * 1024
    BATCH_SECONDS = 0.2

    def __init__(self, channel: Channel) -> None:
        self.channel = channel
        self.pending: list[str] = []
        self.pending_chars = 0
        self.gather = threading.RLock()  # held only to add or take: re-entered by a signal handler's print
        self.sending = threading.Lock()
        threading.Thread(target=self._send_waiting, name="log-pieces", daemon=True).start()

    def add(self, piece: str) -> None:
        with self.gather:
            self.pending.append(piece)
            self.pending_chars += len(piece)
            full = self.pending_chars >= self.BATCH_CHARS
        if full:
            self.flush(wait=False)

    def flush(self, wait: bool = False) -> None:
        """Send what waits; without ``wait``, only when no other send is under way (that one's sender, or the
        thread, sends it next)."""
        if not self.sending.acquire(blocking=wait):
            return
        try:
            self._send_pending()
        finally:
            self.sending.release()

    def _send_pending(self) -> None:
        with self.gather:
            batch, self.pending, self.pending_chars = self.pending, [], 0
        if batch:
            self.channel.send({"piece": redact_text("".join(batch))})

    def send_after(self, message: dict[str, Any]) -> None:
        """Send what waits, then ``message`` (the whole log, which replaces the pieces: none may follow it)."""
        with self.sending:
            self._send_pending()
            self.channel.send(message)

    def _send_waiting(self) -> None:
        while True:
            time.sleep(self.BATCH_SECONDS)
            if self.pending:
                self.flush(wait=True)


class ChildLogSink:
    """The try's log, sent to the worker as it grows (the worker masks it again and writes it to its sink).
    ``earlier`` is the log a resumed try or a sensor's next poke goes on from (the worker read it)."""

    def __init__(self, channel: Channel, pieces: LogPieces, earlier: str | None = None) -> None:
        self.channel = channel
        self.pieces = pieces
        self.earlier = earlier

    def write(self, key: TIKey, try_number: int, text: str) -> None:
        self.pieces.send_after({"log": text})

    def read(self, key: TIKey, try_number: int) -> str | None:
        return self.earlier


def run_child(connection: Connection) -> int:
    """Run the one job the worker sends (a try, a callback request's callbacks, a look at a trigger); the exit
    status says only whether a result was sent."""
    # lazy: the worker imports this module (supervisor's PID); log modules only in the child
    from updraft.runtime import log_limit, logs

    job: dict[str, Any] = pickle.loads(connection.recv_bytes())
    os.environ.clear()  # the worker's environment as it is now, scrubbed, with the DAG-code role's credentials
    os.environ.update(job["env"])
    if job["plugins_folder"]:  # before any reply is unpickled: a DAG version may name a plugin's timetable
        # lazy: the worker imports this module; the child warms these (RUNTIME_MODULES) in main
        from updraft.plugins import load_plugins_folder

        load_plugins_folder(job["plugins_folder"])
    channel = Channel(connection)
    # The log goes to the worker in pieces as it is printed (masked here, where the try's secrets are known), and
    # whole, masked again, at the end; the worker writes it to the sink as it grows. Both keep the worker's limit.
    logs.LIVE_EVERY_S = 0
    log_limit.LIMIT = job["log_max_bytes"]
    pieces = LogPieces(channel)
    logs.follow_writes(pieces.add, pieces.flush)
    store = StoreProxy(channel, has_backend=job["has_backend"], backend_error=job["backend_error"])
    if job["has_sender"]:
        # lazy: the worker imports this module; the child warms these (RUNTIME_MODULES) in main
        from updraft.notifications.ses import send_through

        send_through(ProxyEmailSender(channel))
    result = _JOBS[job["kind"]](job, store, channel, pieces)
    reaper.end_descendants()  # before the worker hears the job is over: nothing it started outlives it
    pieces.flush(wait=True)
    channel.send({"result": result})
    return 0


def _try(job: dict[str, Any], store: StoreProxy, channel: Channel, pieces: LogPieces) -> dict[str, Any]:
    # lazy: the worker imports this module; the child warms these (RUNTIME_MODULES) in main
    from updraft.executors.base import Dispatch
    from updraft.runtime.execute import run_try
    from updraft.runtime.loader import LocalDagLoader

    dispatch = Dispatch.from_payload(job["dispatch"])
    loader = LocalDagLoader(job["dags_folder"], job["plugins_folder"])
    result = run_try(dispatch, store=store, loader=loader, now_fn=store.now,  # type: ignore[arg-type]
                     log_sink=ChildLogSink(channel, pieces, job["earlier_log"]), hostname=job["hostname"],
                     run=job["run"], started=job["started"])
    return result_message(result)


def _callbacks(job: dict[str, Any], store: StoreProxy, channel: Channel, pieces: LogPieces) -> dict[str, Any]:
    """A callback request's callbacks (the worker claimed the request: this delivery is the one that runs)."""
    # lazy: the worker imports this module; the child warms these (RUNTIME_MODULES) in main
    from updraft.executors.callback_requests import DagCallbackRequest
    from updraft.runtime.dag_callbacks import call_dag_callbacks
    from updraft.runtime.loader import LocalDagLoader
    from updraft.runtime.task_callbacks import call_task_callbacks

    request, sink = job["request"], ChildLogSink(channel, pieces)
    loader = LocalDagLoader(job["dags_folder"], job["plugins_folder"])
    if isinstance(request, DagCallbackRequest):
        call_dag_callbacks(request, store=store, loader=loader, now_fn=store.now, log_sink=sink)  # type: ignore[arg-type]
    else:
        call_task_callbacks(request, store=store, loader=loader, now_fn=store.now, log_sink=sink)  # type: ignore[arg-type]
    return {"state": TaskInstanceState.SUCCESS.value}


def _trigger(job: dict[str, Any], store: StoreProxy, channel: Channel, pieces: LogPieces) -> dict[str, Any]:
    """One look at a deferred try's trigger: ``{"fired", "event", "poll_seconds"}``, or the error it raised."""
    # lazy: the worker imports this module; the child warms these (RUNTIME_MODULES) in main
    from updraft.runtime.trigger_look import look

    if job["dags_folder"] and job["dags_folder"] not in sys.path:  # a trigger class defined beside the DAGs
        sys.path.append(job["dags_folder"])
    try:
        return look(str(job["classpath"]), dict(job["kwargs"]), store,  # type: ignore[arg-type]
                    step_seconds=job["step_seconds"], credentials=os.environ)  # scrubbed: the role's alone
    except Exception as exc:
        import traceback

        traceback.print_exc()
        return {"error": f"{type(exc).__name__}: {exc}"}


_JOBS = {"try": _try, "callbacks": _callbacks, "trigger": _trigger}


def result_message(result: TryResult) -> dict[str, Any]:
    """The try's result as JSON (datetimes as ISO text); ``supervisor`` checks every field before it believes it."""
    return {"state": result.state.value, "force_fail": result.force_fail, "xcom_length": result.xcom_length,
            "skip_task_ids": list(result.skip_task_ids), "note": result.note,
            "retry_delay": None if result.retry_delay is None else result.retry_delay.total_seconds(),
            "reschedule_date": None if result.reschedule_date is None else result.reschedule_date.isoformat(),
            "deferral": None if result.deferral is None else dataclasses.asdict(result.deferral)}


def _child(fd: int) -> None:
    """In the forked child: own session, nothing of the server's but stdio, then the try; never returns."""
    status = 1
    try:
        os.setsid()
        reaper.become_subreaper()  # what the try starts stays below it, setsid and double forks included
        with contextlib.suppress(OSError, AttributeError):  # the server gone (the worker stopped): so is the try
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the task's own subprocesses are waited for as usual
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        status = run_child(Connection(fd))
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        with contextlib.suppress(BaseException):
            reaper.end_descendants()  # again: on the way out of an exception, or what the job's last words left
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)


def serve(control: socket.socket) -> None:
    """The server loop: one fork per request, until the worker closes the control socket (then every try's
    process and everything below it is killed: the worker is gone, nobody will take their results).

    The server is a subreaper (``reaper``): a try's child that ends without its own sweep (killed on a timeout or
    a lost heartbeat, ``os._exit`` in user code) leaves its orphans to the server, which kills them when that
    child ends (SIGCHLD wakes the loop) and again before each fork, so the next try finds none of them."""
    reaper.become_subreaper()
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda _signum, _frame: None)  # the wakeup byte is what counts
    children: set[int] = set()  # the tries' children, not yet reaped (so their pids are not reused)
    while True:
        ready, _, _ = select.select([control.fileno(), wake_r], [], [])
        if wake_r in ready:
            with contextlib.suppress(BlockingIOError):
                while os.read(wake_r, 512):
                    pass
            _sweep(children)
        if control.fileno() not in ready:
            continue
        try:
            message, fds, _flags, _addr = socket.recv_fds(control, 1, 1)
        except InterruptedError:
            continue
        except OSError:
            message, fds = b"", []
        if not message or not fds:
            reaper.kill_strays()  # every child, with everything below it
            return
        _sweep(children)
        gc.collect()
        gc.freeze()  # the server's objects stay frozen in the child: the collector never touches (copies) them
        pid = os.fork()
        if pid == 0:
            control.close()
            signal.set_wakeup_fd(-1)
            os.close(wake_r)
            os.close(wake_w)
            _child(fds[0])
        os.close(fds[0])
        children.add(pid)
        control.sendall(PID.pack(pid))


def _sweep(children: set[int]) -> None:
    """Reap the tries' children that ended, then kill whatever else is a child of the server: orphans."""
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
        children.discard(pid)
    reaper.kill_strays(keep=children)


# What every try imports that the runtime imports lazily (a try's child would pay each again: jinja2 alone is
# ~0.2 s), imported once in the server.
RUNTIME_MODULES = ("updraft.runtime.execute", "updraft.runtime.dag_callbacks", "updraft.runtime.task_callbacks",
                   "updraft.runtime.trigger_look", "updraft.runtime.templates", "updraft.runtime.mapping",
                   "updraft.runtime.rendered_fields", "updraft.runtime.task_email", "updraft.runtime.loader",
                   "updraft.executors.base", "updraft.notifications.ses", "updraft.plugins", "jinja2",
                   "jinja2.sandbox", "jinja2.nativetypes", "jinja2.ext", "updraft.sdk.connection",
                   "updraft.sdk.variable")


def main() -> None:
    # lazy: the worker imports this module (supervisor's PID); these only in the child
    from updraft.parsing.warm import warm_up
    from updraft.process_guard import make_undumpable

    make_undumpable()  # first: the exec made this process dumpable again, and its children inherit the flag
    control = socket.socket(fileno=int(sys.argv[1]))
    control.sendall(GUARDED)

    warm_up(RUNTIME_MODULES)
    warm_up()
    # Collected and frozen before the first request, as before each fork: otherwise the first try of every server
    # waits for a full collection of what warm-up built (~60,000 objects, ~35 ms of CPU).
    gc.collect()
    gc.freeze()
    serve(control)


if __name__ == "__main__":
    main()
