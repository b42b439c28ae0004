"""Local mode's compute: the worker Lambda as a pool of processes, a Fargate task as a process of its own.

Both run the real handler module (``functions/worker/handler.py``): the pool calls ``handler(event, context)``
as Lambda does, a Fargate task runs ``python -m functions.worker.handler`` with the dispatch in its environment
as the container does. Worker processes ignore Ctrl-C (the terminal sends it to the whole process group): local
mode decides how running tries stop, not the signal.
"""

from __future__ import annotations

import concurrent.futures
import json
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

WORKER_MODULE = "functions.worker.handler"


def handlers_root() -> str:
    """The folder holding ``functions/`` (the repository root of an editable install)."""
    import updraft

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


def _init_worker(env: dict[str, str], root: str) -> None:
    global _handler
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ.update(env)
    if root not in sys.path:
        sys.path.insert(0, root)
    import importlib

    _handler = importlib.import_module(WORKER_MODULE)


def discard_metrics(handler_module: Any) -> None:
    """Drop what a handler recorded: local mode has no CloudWatch, and with POWERTOOLS_METRICS_DISABLED
    Powertools keeps every value and still prints them all once 100 pile up (it never clears disabled metrics)."""
    metrics = getattr(handler_module, "metrics", None)
    if metrics is not None:
        metrics.clear_metrics()


def _invoke(function_name: str, payload: Any) -> dict[str, Any]:
    try:
        return _handler.handler(payload, LocalLambdaContext(function_name))
    finally:
        discard_metrics(_handler)


def _ready() -> int:
    return os.getpid()


class WorkerPool:
    """The worker Lambda's concurrency: ``size`` warm processes, forked from a clean fork server."""

    def __init__(self, size: int, env: dict[str, str], function_name: str) -> None:
        self.size = size
        self.function_name = function_name
        self._env = env
        self._root = handlers_root()
        self._lock = threading.Lock()
        self._pool = self._new_pool()

    def _new_pool(self) -> concurrent.futures.ProcessPoolExecutor:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([WORKER_MODULE])
        return concurrent.futures.ProcessPoolExecutor(self.size, mp_context=context, initializer=_init_worker,
                                                      initargs=(self._env, self._root))

    def warm(self) -> None:
        """Start every process now, so the first tasks do not pay for interpreter start-up."""
        futures = [self._pool.submit(_ready) for _ in range(self.size * 2)]
        concurrent.futures.wait(futures)

    def submit(self, payload: Any) -> concurrent.futures.Future:
        with self._lock:
            try:
                return self._pool.submit(_invoke, self.function_name, payload)
            except concurrent.futures.process.BrokenProcessPool:
                # A task killed its process (os._exit, a segfault): the pool is unusable, so start a new one.
                # The tries it was running are reported lost by their futures and handled as orphans.
                self._pool.shutdown(wait=False, cancel_futures=True)
                self._pool = self._new_pool()
                return self._pool.submit(_invoke, self.function_name, payload)

    def stop(self, *, kill: bool) -> None:
        with self._lock:
            if kill:
                for process in list(getattr(self._pool, "_processes", {}).values()):
                    process.kill()
            self._pool.shutdown(wait=True, cancel_futures=True)


@dataclass
class FargateTask:
    task_arn: str
    payload: dict[str, Any]
    process: subprocess.Popen
    on_exit: Callable[[FargateTask, dict[str, Any] | None], None]

    def result(self) -> dict[str, Any] | None:
        out = self.process.stdout.read() if self.process.stdout else ""
        lines = [line for line in (out or "").splitlines() if line.startswith("{")]
        try:
            return json.loads(lines[-1]) if lines else None
        except ValueError:
            return None


class FargateRunner:
    """``ecs:RunTask`` played locally: the container's command as a process with the container's environment."""

    def __init__(self, env: dict[str, str]) -> None:
        self._env = env
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
        arn = f"arn:aws:ecs:us-east-1:123456789012:task/{request.get('cluster', 'local')}/{task_id}"
        try:
            payload = json.loads(env.get("UPDRAFT_DISPATCH", "{}"))
        except ValueError:
            payload = {}
        task = FargateTask(arn, payload, process, on_exit)
        with self._lock:
            self.running[arn] = task
        threading.Thread(target=self._wait, args=(task,), name=f"fargate-{task_id}", daemon=True).start()
        return {"tasks": [{"taskArn": arn, "lastStatus": "RUNNING", "launchType": "FARGATE"}], "failures": []}

    def _wait(self, task: FargateTask) -> None:
        result = task.result()
        task.process.wait()
        with self._lock:
            self.running.pop(task.task_arn, None)
        task.on_exit(task, result)

    def stop(self, *, kill: bool, timeout: float = 0.0) -> list[FargateTask]:
        """Stop the tasks still running; returns them (their tries are orphans)."""
        with self._lock:
            tasks = list(self.running.values())
        for task in tasks:
            if kill:
                task.process.kill()
            else:
                try:
                    task.process.wait(timeout)
                except subprocess.TimeoutExpired:
                    task.process.kill()
        return tasks
