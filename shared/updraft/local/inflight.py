"""Tries local mode handed to a worker process or a Fargate process, until each reports or is released.

On AWS, Lambda and ECS keep track of what they run; here this does. A try whose process died, or that was still
running when local mode stopped, is an orphan: released (``orphans``) for the scheduler to retry or fail as
Airflow would, and the scheduler is asked to look at its run at once.
"""

from __future__ import annotations

import concurrent.futures
import datetime as dt
import logging
import threading
from collections.abc import Callable
from typing import Any

from updraft.handler_events import run_changed_event
from updraft.local.orphans import release_orphan
from updraft.local.run_watch import RunWatcher
from updraft.model.states import TaskInstanceState

log = logging.getLogger(__name__)


class InflightTries:
    def __init__(self, *, store: Any, say: Callable[[str], None], runs: RunWatcher,
                 stopping: Callable[[], bool], nudge_run: Callable[[dict[str, Any]], None]) -> None:
        self.store = store
        self.say = say
        self.runs = runs
        self.stopping = stopping
        self.nudge_run = nudge_run  # schedules a scheduler call with a run-changed event
        self.orphans: dict[str, str] = {}  # task label -> the state its try was released from
        self._inflight: dict[str, tuple[dict[str, Any], Any]] = {}  # try_id -> (payload, future or task)
        self._lock = threading.Lock()

    def on_worker(self, payload: dict[str, Any], future: concurrent.futures.Future) -> None:
        """A try submitted to the worker pool; reported (or released) when its future is done."""
        self.track(payload, future)
        future.add_done_callback(lambda done: self._worker_done(payload, done))

    def track(self, payload: dict[str, Any], handle: Any) -> None:
        if isinstance(payload, dict) and payload.get("try_id"):
            with self._lock:
                self._inflight[payload["try_id"]] = (payload, handle)

    def _untrack(self, payload: Any) -> None:
        if isinstance(payload, dict) and payload.get("try_id"):
            with self._lock:
                self._inflight.pop(payload["try_id"], None)

    def _worker_done(self, payload: dict[str, Any], future: concurrent.futures.Future) -> None:
        self._untrack(payload)
        try:
            result = future.result()
        except BaseException as exc:  # the process died or local mode cancelled it: the try is an orphan
            reason = "local mode stopped" if self.stopping() else f"its worker process died: {type(exc).__name__}"
            self.release(payload, reason=reason)
            return
        self._report(payload, result)

    def fargate_done(self, task: Any, result: dict[str, Any] | None) -> None:
        """A Fargate process exited (``FargateRunner``'s callback). One that failed is reported to the scheduler
        as ECS reports a stopped task on AWS (``executors.fargate.lost_try``): its try fails or retries at once,
        with the exit code in its note. Ended by local mode's stop, its try is an orphan, settled at the next
        start."""
        self._untrack(task.payload)
        if task.process.returncode != 0:
            if self.stopping():
                self.release(task.payload, reason=f"Fargate process exited with {task.process.returncode}")
            else:
                self.say(f"task {task.payload.get('dag_id')}.{task.payload.get('task_id')} try "
                         f"{task.payload.get('try_number')}: its Fargate process exited with "
                         f"{task.process.returncode}")
                self.nudge_run(task.stopped_event())
            return
        if result is not None:
            self._report(task.payload, result, where=" on Fargate")

    def _report(self, payload: dict[str, Any], result: dict[str, Any], where: str = "") -> None:
        self.runs.try_reported(str(payload.get("dag_id")), str(payload.get("run_id")))
        label = f"{payload.get('dag_id')}.{result.get('task', payload.get('task_id'))}"
        if result.get("status") == "ran":
            self.say(f"task {label} try {result.get('try_number')} -> {result.get('state')}{where} "
                     f"({payload.get('run_id')})")
        elif result.get("status") == "rejected":
            self.say(f"task {label}: dispatch rejected ({result.get('error')})")

    def release(self, payload: dict[str, Any], *, reason: str = "local mode stopped") -> str | None:
        """Release a try that will not report, for the scheduler; the state it was released from, if any."""
        try:
            state = release_orphan(self.store, payload, now=dt.datetime.now(dt.UTC))
        except Exception:
            log.exception("local mode: could not release try %s", payload)
            return None
        if state is not None:
            label = f"{payload.get('dag_id')}.{payload.get('task_id')}"
            self.orphans[label] = state
            self.say(f"task {label} try {payload.get('try_number')} lost while {state} ({reason}): "
                     f"released for the scheduler to "
                     f"{'retry or fail' if state == TaskInstanceState.RUNNING else 'schedule again'}")
            if not self.stopping():
                self.nudge_run(self._run_event(payload))
        return state

    @staticmethod
    def _run_event(payload: dict[str, Any]) -> dict[str, Any]:
        return run_changed_event(payload["dag_id"], payload["run_id"], source="updraft.local")

    def running_futures(self) -> list[concurrent.futures.Future]:
        with self._lock:
            return [h for _, h in self._inflight.values() if isinstance(h, concurrent.futures.Future)]

    def release_leftovers(self) -> None:
        """On stop, once workers and Fargate processes are gone: every try still tracked is an orphan."""
        with self._lock:
            leftovers = [payload for payload, _ in self._inflight.values()]
            self._inflight.clear()
        for payload in leftovers:
            self.release(payload)
