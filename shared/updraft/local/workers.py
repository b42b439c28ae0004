"""Local mode's compute: the worker Lambda as a pool of processes, a Fargate task as a process of its own.

Both run the real handler module (``functions/worker/handler.py``): the pool calls ``handler(event, context)``
as Lambda does, a Fargate task runs ``python -m functions.worker.handler`` with the dispatch in its environment
as the container does. Worker processes ignore Ctrl-C (the terminal sends it to the whole process group): local
mode decides how running tries stop, not the signal.
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import json
import logging
import multiprocessing
import os
import select
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

import updraft
from updraft.executors.fargate import TASK_STATE_CHANGE
from updraft.services import shared_services

WORKER_MODULE = "functions.worker.handler"

# How much lower than local mode's own process the worker processes and Fargate tasks run (Unix niceness, inherited
# by the tries they start). Local mode's embedded AWS answers one request at a time and is the bottleneck of a busy
# run: workers spend most of a try waiting for its answers. On AWS its services never share a worker's CPU; here,
# at equal priority, workers doing their own share (a request's client side, the scheduling after an end) took
# cores it needed, and each of its answers came later. Measured on 2 cores, local fan-out 1 -> 200 -> 1 at 32,
# alternated pairs of two runs: 14.3 / 12.6 / 10.0 s at 0 against 11.4 / 10.8 / 8.4 s at 10 (-15%); 19 as fast
# as 10, 5 half as much gain. See ``docs/decisions/0035-local-compute-runs-below-the-embedded-aws.md``.
COMPUTE_NICENESS = 10


def handlers_root() -> str:
    """The folder holding ``functions/`` (the repository root of an editable install)."""
    root = Path(updraft.__file__).resolve().parents[2]
    if not (root / "functions" / "worker" / "handler.py").is_file():
        raise RuntimeError(f"local mode runs the Lambda handlers from a checkout: functions/ not found in {root} "
                           f"(install Updraft with `pip install -e .` from the repository)")
    return str(root)


@dataclass(frozen=True)
class LocalLambdaContext:
    """The attributes Powertools' ``inject_lambda_context`` reads from Lambda's context object."""

    function_name: str
    memory_limit_in_mb: int = 1024
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:us-east-1:123456789012:function:{self.function_name}"


_handler: Any = None


def start_resource_tracker() -> None:
    """Start multiprocessing's resource tracker (the worker pool's fork server uses it) as a process of Updraft's:
    non-dumpable and with a scrubbed environment.

    The tracker is a fresh interpreter started by ``python -c <its main>``; left as it is, user code of the same
    user could read its ``/proc/<pid>/environ`` (whatever credentials `updraft local` was started with) and
    ``ptrace`` it, a process outside every try's reach that outlives them. So its command is prefixed with
    ``updraft.process_guard.make_undumpable()`` and it starts without ``AWS_*``/``UPDRAFT_*``. Call it while this
    process has one thread (``os.environ`` and the spawn function are swapped meanwhile); the pool then reuses it.
    """
    from multiprocessing import resource_tracker, util

    # lazy: the worker children import this module; they need no parsing package
    from updraft.parsing.scrub import scrub_environment

    spawn = util.spawnv_passfds

    def guarded(path: bytes, args: Sequence[Any], passfds: Sequence[int]) -> int:
        *head, code = args  # [python, *flags, "-c", code]
        return spawn(path, [*head, f"from updraft.process_guard import make_undumpable;make_undumpable();{code}"],
                     passfds)

    saved = dict(os.environ)
    scrub_environment(os.environ)
    util.spawnv_passfds = guarded
    try:
        resource_tracker.ensure_running()
    finally:
        util.spawnv_passfds = spawn
        os.environ.update(saved)


def _init_worker(env: dict[str, str], root: str) -> None:
    """What makes this process a warm container: import the handler, then run its ``warm_up`` (the try path's
    imports, clients, credentials and task server), so that no try pays for them."""
    global _handler
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # lazy: only the worker child's init runs it; the `updraft local` parent needs no task-log code
    from updraft.runtime.logs import write_logs_on_sigterm

    write_logs_on_sigterm()  # a try stopped by local mode keeps the log it had written
    os.environ.update(env)
    if root not in sys.path:
        sys.path.insert(0, root)
    import importlib

    _handler = importlib.import_module(WORKER_MODULE)
    _handler.warm_up()


def flush_handler_metrics(handler_module: Any) -> None:
    """Write what a handler recorded where local mode keeps its metrics (``Services.metrics``: the EMF line its
    function would print, in local mode's metrics file), then drop it: with POWERTOOLS_METRICS_DISABLED (no
    stdout lines here) Powertools keeps every value and still prints them all once 100 pile up."""
    metrics = getattr(handler_module, "metrics", None)
    if metrics is None:
        return
    if metrics.metric_set:
        shared_services().metrics.writer.put_line(json.dumps(metrics.serialize_metric_set(), separators=(",", ":")))
    metrics.clear_metrics()


def _invoke(function_name: str, payload: Any) -> dict[str, Any]:
    try:
        return _handler.handler(payload, LocalLambdaContext(function_name))
    finally:
        flush_handler_metrics(_handler)


def _end_with(owner: int) -> None:
    """End this process as soon as process ``owner`` (local mode's) ends, a ``kill -9`` included: nobody is left
    to take a result. A running try then ends too, and everything it started: its task server sees the worker
    gone and kills every try's process with what is below it (``runtime.task_process.serve``)."""
    try:
        handle = os.pidfd_open(owner)
    except (AttributeError, OSError):  # not Linux, or the owner already gone (then the next reply fails instead)
        return

    def watch() -> None:
        select.select([handle], [], [])
        os._exit(1)

    threading.Thread(target=watch, name="owner-watch", daemon=True).start()


def _worker_main(conn: Connection, env: dict[str, str], root: str, function_name: str, owner: int,
                 niceness: int) -> None:
    """One worker process: invoke after invoke, one at a time, like one Lambda execution environment, for as long
    as local mode's process (``owner``) runs, ``niceness`` below it (before its first thread: threads inherit it)."""
    os.nice(niceness)
    _end_with(owner)
    _init_worker(env, root)
    conn.send_bytes(b'"ready"')
    while True:
        try:
            payload = json.loads(conn.recv_bytes())
        except (EOFError, OSError):
            return
        if payload is None:
            return
        try:
            reply: dict[str, Any] = {"ok": _invoke(function_name, payload)}
        except BaseException as exc:  # the handler raised: Lambda reports a failed invocation, so do we
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        conn.send_bytes(json.dumps(reply, default=str).encode())


# How long a stopped worker process has to write the logs of its running try before it is killed.
STOP_GRACE_S = 3.0


def _stop_processes(processes: list[Any]) -> None:
    """SIGTERM (a worker writes its running try's log and exits), then SIGKILL what is still there."""
    for process in processes:
        with contextlib.suppress(Exception):
            process.terminate()
    deadline = time.monotonic() + STOP_GRACE_S
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            process.kill()


class WorkerDied(RuntimeError):
    """The process running a try exited (a task called os._exit, crashed the interpreter, or was killed)."""


@dataclass(eq=False)
class _Worker:
    process: Any
    conn: Connection
    future: concurrent.futures.Future | None = None


class WorkerPool:
    """The worker Lambda's concurrency: ``size`` warm processes, forked from a clean fork server.

    The most recently freed process takes the next invoke (a stack, not a queue): a chain of tasks then runs in
    the same warm process, with its DAG already imported, as a busy Lambda function reuses its warmest
    environment. A process that dies fails only the invoke it was running, and a new one takes its place. Each
    runs ``niceness`` below the pool's process (``COMPUTE_NICENESS``).
    """

    def __init__(self, size: int, env: dict[str, str], function_name: str, *,
                 niceness: int = COMPUTE_NICENESS) -> None:
        self.size = size
        self.function_name = function_name
        self.niceness = niceness
        self._env = env
        self._root = handlers_root()
        self._context = multiprocessing.get_context("forkserver")
        self._context.set_forkserver_preload([WORKER_MODULE])
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []
        self._busy: dict[Connection, _Worker] = {}
        self._pending: collections.deque[tuple[Any, concurrent.futures.Future]] = collections.deque()
        self._closing = False
        self._peak_busy = 0  # the most processes busy at once since the last take_peak_busy (for benchmarks)
        self._wake_r, self._wake_w = multiprocessing.Pipe(duplex=False)
        self._reader = threading.Thread(target=self._read_replies, name="worker-replies", daemon=True)
        self._reader.start()

    def _spawn(self) -> _Worker:
        parent, child = self._context.Pipe()
        process = self._context.Process(target=_worker_main, name="updraft-worker", daemon=True,
                                        args=(child, self._env, self._root, self.function_name, os.getpid(),
                                              self.niceness))
        process.start()
        child.close()
        if not parent.poll(120):
            process.kill()
            raise RuntimeError("a worker process did not start within 120 s")
        parent.recv_bytes()  # "ready": imported and warmed up
        return _Worker(process, parent)

    def warm(self) -> None:
        """Start every process now (in parallel), so no try pays for interpreter start-up."""
        with concurrent.futures.ThreadPoolExecutor(self.size) as starter:
            workers = list(starter.map(lambda _: self._spawn(), range(self.size)))
        with self._lock:
            self._idle.extend(workers)
        self._drain_pending()

    def submit(self, payload: Any) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        with self._lock:
            self._pending.append((payload, future))
        self._drain_pending()
        return future

    def _drain_pending(self) -> None:
        dispatched = False
        with self._lock:
            while self._pending and self._idle and not self._closing:
                payload, future = self._pending.popleft()
                if not future.set_running_or_notify_cancel():
                    continue
                worker = self._idle.pop()
                worker.future = future
                try:
                    worker.conn.send_bytes(json.dumps(payload).encode())
                except OSError:
                    future.set_exception(WorkerDied("the worker process was gone before the invoke reached it"))
                    threading.Thread(target=self._replace, daemon=True).start()
                    continue
                self._busy[worker.conn] = worker
                self._peak_busy = max(self._peak_busy, len(self._busy))
                dispatched = True
        if dispatched:  # the reader must add the new busy connection to what it waits on
            self._wake_w.send_bytes(b"")

    def take_peak_busy(self) -> int:
        """The most worker processes busy at once since the last call (then counting starts again)."""
        with self._lock:
            peak, self._peak_busy = self._peak_busy, len(self._busy)
        return peak

    def _read_replies(self) -> None:
        while not self._closing:
            with self._lock:
                conns = list(self._busy)
            for conn in wait([self._wake_r, *conns], timeout=1.0):
                if conn is self._wake_r:
                    self._wake_r.recv_bytes()
                    continue
                self._reply(conn)  # type: ignore[arg-type]

    def _reply(self, conn: Connection) -> None:
        with self._lock:
            worker = self._busy.pop(conn, None)
        if worker is None or worker.future is None:
            return
        future, worker.future = worker.future, None
        try:
            reply = json.loads(conn.recv_bytes())
        except (EOFError, OSError):
            worker.process.join(1)
            future.set_exception(WorkerDied(f"worker process exited with code {worker.process.exitcode}"))
            conn.close()
            if not self._closing:
                threading.Thread(target=self._replace, daemon=True).start()
            return
        if "error" in reply:
            future.set_exception(RuntimeError(reply["error"]))
        else:
            future.set_result(reply["ok"])
        with self._lock:
            self._idle.append(worker)
        self._drain_pending()

    def _replace(self) -> None:
        try:
            worker = self._spawn()
        except Exception:
            logging.getLogger(__name__).exception("could not start a worker process to replace a dead one")
            return
        with self._lock:
            if self._closing:
                worker.process.kill()
                return
            self._idle.append(worker)
        self._drain_pending()

    def stop(self) -> None:
        """Kill every process (local mode gave running tries their grace period); unstarted invokes are cancelled
        and the running ones fail with WorkerDied, so their tries are released as orphans."""
        with self._lock:
            self._closing = True
            pending, self._pending = list(self._pending), collections.deque()
            workers = self._idle + list(self._busy.values())
        for _, future in pending:
            future.cancel()
        _stop_processes([worker.process for worker in workers])
        self._wake_w.send_bytes(b"")
        self._reader.join(timeout=5)
        for worker in workers:
            worker.process.join(5)
            if worker.future is not None and not worker.future.done():
                worker.future.set_exception(WorkerDied("local mode stopped the worker process"))


@dataclass
class FargateTask:
    task_arn: str
    payload: dict[str, Any]
    process: subprocess.Popen
    on_exit: Callable[[FargateTask, dict[str, Any] | None], None]
    container: dict[str, Any]  # RunTask's container override, as ECS echoes it in the task's events

    def stopped_event(self) -> dict[str, Any]:
        """The EventBridge event ECS sends when this task stops (the stack's rule delivers it to the scheduler):
        its container's exit code and override, so the scheduler judges a local task's end as a deployed one's."""
        exit_code = self.process.returncode
        name = self.container.get("name", "worker")
        killed = exit_code is not None and exit_code < 0  # a signal: ECS reports 128 + its number
        return {"version": "0", "source": "aws.ecs", "detail-type": TASK_STATE_CHANGE, "resources": [self.task_arn],
                "detail": {"taskArn": self.task_arn, "lastStatus": "STOPPED", "desiredStatus": "STOPPED",
                           "launchType": "FARGATE", "stopCode": "EssentialContainerExited",
                           "stoppedReason": "Essential container in task exited",
                           "overrides": {"containerOverrides": [self.container]},
                           "containers": [{"name": name, "lastStatus": "STOPPED",
                                           "exitCode": 128 - exit_code if killed else exit_code}]}}

    def result(self) -> dict[str, Any] | None:
        out = self.process.stdout.read() if self.process.stdout else ""
        lines = [line for line in (out or "").splitlines() if line.startswith("{")]
        try:
            return json.loads(lines[-1]) if lines else None
        except ValueError:
            return None


class FargateRunner:
    """``ecs:RunTask`` played locally: the container's command as a process with the container's environment,
    ``niceness`` below local mode's process (``COMPUTE_NICENESS``)."""

    def __init__(self, env: dict[str, str], *, niceness: int = COMPUTE_NICENESS) -> None:
        self._env = env
        self.niceness = niceness
        self._root = handlers_root()
        self._lock = threading.Lock()
        self.running: dict[str, FargateTask] = {}

    def run_task(self, request: dict[str, Any], task_id: str,
                 on_exit: Callable[[FargateTask, dict[str, Any] | None], None]) -> dict[str, Any]:
        overrides = (request.get("overrides") or {}).get("containerOverrides") or [{}]
        container = overrides[0]
        env = {**os.environ, **self._env, **{e["name"]: e["value"] for e in container.get("environment") or []}}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (self._root, env.get("PYTHONPATH")) if p)
        command = container.get("command") or ["python", "-m", WORKER_MODULE]
        if command[0] in ("python", "python3"):
            command = [sys.executable, *command[1:]]
        # Its own session: Ctrl-C in the terminal reaches local mode, which decides how the task stops.
        process = subprocess.Popen(command, env=env, cwd=self._root, stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, text=True, start_new_session=True)
        # Set from here, not by a preexec_fn (unsafe in a threaded process): the interpreter it starts has no
        # second thread yet, and those it starts inherit the main thread's niceness. An exited task needs none.
        with contextlib.suppress(ProcessLookupError):
            os.setpriority(os.PRIO_PROCESS, process.pid, min(19, os.getpriority(os.PRIO_PROCESS, 0) + self.niceness))
        arn = f"arn:aws:ecs:us-east-1:123456789012:task/{request.get('cluster', 'local')}/{task_id}"
        try:
            payload = json.loads(env.get("UPDRAFT_DISPATCH", "{}"))
        except ValueError:
            payload = {}
        task = FargateTask(arn, payload, process, on_exit, {"name": "worker", **container})
        with self._lock:
            self.running[arn] = task
        threading.Thread(target=self._wait, args=(task,), name=f"fargate-{task_id}", daemon=True).start()
        return {"tasks": [{"taskArn": arn, "lastStatus": "RUNNING", "launchType": "FARGATE"}], "failures": []}

    def _wait(self, task: FargateTask) -> None:
        with task.process:  # on leaving: its stdout closed and the process reaped
            result = task.result()
        with self._lock:
            self.running.pop(task.task_arn, None)
        task.on_exit(task, result)

    def stop(self) -> list[FargateTask]:
        """Kill the tasks still running (local mode gave them their grace period); returns them: their tries
        are orphans."""
        with self._lock:
            tasks = list(self.running.values())
        for task in tasks:
            task.process.kill()
        for task in tasks:  # reaped before local mode's process can end with them unwaited for
            with contextlib.suppress(subprocess.TimeoutExpired):
                task.process.wait(timeout=5)
        return tasks
