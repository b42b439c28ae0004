"""Long tasks never die at Lambda's limits: a try about to reach one is stopped and handed to Fargate, once.

The rule (README, "Long tasks"): a try on the worker Lambda that comes within ``UPDRAFT_LAMBDA_HANDOFF_MARGIN_SECONDS``
(30 s) of the function's timeout (``context.get_remaining_time_in_millis()``), or whose processes (the worker and
every process it started, shared pages counted once: :func:`process_tree_rss_mb`) use
``UPDRAFT_LAMBDA_HANDOFF_MEMORY_FRACTION`` (90 %) of the function's memory, is
stopped: :class:`LambdaLimitReached` is raised in the task's thread (a ``BaseException``, like Airflow's
``AirflowTaskTimeout``, so ``except Exception`` in task code does not swallow it), the try's log so far is written,
and :func:`hand_off`

1. records that the task runs on Fargate from now on (``store.remember_long_task``: its later tries are routed
   there directly by ``executors.routing``),
2. moves the try ``running -> queued`` with a new fencing token, keeping its try number (the single conditional
   write that commits the hand-off; a duplicate Lambda delivery of the old dispatch then runs nothing),
3. dispatches it to Fargate with ``handed_off`` set, so that worker keeps the Lambda part's log ahead of its own.

No retry is spent: the try number stays, as Airflow keeps it when a deferred or rescheduled try resumes. Fargate
has no time limit, so a try is handed off at most once. A crash between 2 and 3 leaves a queued try nobody
started: the scheduler's queued timeout schedules it again, and the record sends it to Fargate. Without a Fargate
executor in the environment the try fails with a note saying which limit it reached (retried as any failure).

Why a watchdog and not the scheduler: an out-of-memory kill or the timeout leaves nothing behind but an expired
lease (the zombie path spends a retry and cannot tell why the worker vanished), while the worker still alive a
little before either limit can stop the task, write its log and hand it over. The memory watchdog samples every
``poll_s``: an allocation faster than that can still be killed by Lambda, and is then a zombie as before.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import logging
import os
import signal
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from updraft import reaper
from updraft.executors.base import Dispatch, Executor
from updraft.model.records import TIKey
from updraft.model.states import TaskInstanceState
from updraft.runtime.log_limit import CappedLog, limit_in_force
from updraft.runtime.logs import LogSink
from updraft.sdk.compute import fargate_size_for
from updraft.store.api import Store

log = logging.getLogger(__name__)

FARGATE = "fargate"
MARGIN_ENV = "UPDRAFT_LAMBDA_HANDOFF_MARGIN_SECONDS"
MEMORY_FRACTION_ENV = "UPDRAFT_LAMBDA_HANDOFF_MEMORY_FRACTION"
DEFAULT_MARGIN_S = 30.0
DEFAULT_MEMORY_FRACTION = 0.9
_SIGNAL = signal.SIGUSR2  # SIGALRM is execution_timeout's; this one only ever means "the Lambda limit is near"


class LambdaLimitReached(BaseException):
    """Raised in the task's thread when its Lambda is about to reach its time or memory limit; ``memory_mb``
    is the function's memory when memory was the limit (Fargate then gets at least twice as much)."""

    def __init__(self, reason: str, memory_mb: int | None = None) -> None:
        super().__init__(reason)
        self.memory_mb = memory_mb


def process_tree_rss_mb(root: int | None = None) -> float:
    """Memory of ``root`` (this process) and every process under it, in MB, from ``/proc``: the worker, its task
    server and each try's child with whatever the task started (they lead their own sessions, so a process group
    would miss them; the parent links do not).

    Each process counts its proportional set size (``Pss`` in ``smaps_rollup``): a page shared by n processes
    counts 1/n in each, so the pages a try's child shares with the task server it was forked from (the warm
    imports) count once, as the function's memory holds them once. Summing resident sizes would count them in
    every child and hand tries off long before the limit. Without ``smaps_rollup`` (kernels before 4.14) the
    resident size (``statm``) is the fallback; so it is for the task server and the tries' own processes when the
    worker runs as a non-root user (as on Lambda): they are non-dumpable (``updraft.process_guard``), which closes
    their ``smaps_rollup`` to a process of the same user. The pages a try shares with the task server (its warm
    imports, ~50 MB) then count twice, and a try is handed to Fargate that much before its real use would be."""
    root = root or os.getpid()
    return sum(_process_mb(pid) for pid in (root, *reaper.descendants(root)))


def _process_mb(pid: int) -> float:
    """One process's proportional set size in MB (its resident size where the kernel has no ``smaps_rollup``);
    0 for a process that is gone."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) / 1024
    with contextlib.suppress(OSError, ValueError, IndexError):
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / (1024 * 1024)
    return 0.0


@dataclasses.dataclass(frozen=True)
class HandedOff:
    """What a worker returns for a try it handed to Fargate: the dispatch it sent, and why."""

    dispatch: Dispatch
    reason: str


@dataclasses.dataclass(frozen=True)
class LambdaLimits:
    """The limits of the Lambda invocation running a try, and how close to them it may go."""

    remaining_ms: Callable[[], int]
    memory_mb: int | None = None
    margin_s: float = DEFAULT_MARGIN_S
    memory_fraction: float = DEFAULT_MEMORY_FRACTION
    poll_s: float = 0.2
    rss_mb: Callable[[], float] = dataclasses.field(default=process_tree_rss_mb)

    @classmethod
    def from_context(cls, context: Any) -> LambdaLimits | None:
        """The limits of a Lambda context; None for something without ``get_remaining_time_in_millis``."""
        remaining = getattr(context, "get_remaining_time_in_millis", None)
        if not callable(remaining):
            return None
        memory = getattr(context, "memory_limit_in_mb", None)
        return cls(remaining_ms=remaining, memory_mb=int(memory) if memory else None,
                   margin_s=float(os.environ.get(MARGIN_ENV, DEFAULT_MARGIN_S)),
                   memory_fraction=float(os.environ.get(MEMORY_FRACTION_ENV, DEFAULT_MEMORY_FRACTION)))

    def reached(self) -> LambdaLimitReached | None:
        """The limit that is near (its message a sentence for the log and the try's note), or None."""
        remaining = self.remaining_ms() / 1000
        if remaining <= self.margin_s:
            return LambdaLimitReached(f"the try reached Lambda's time limit ({remaining:.1f} s left, handing off "
                                      f"{self.margin_s:g} s before the function's timeout)")
        if self.memory_mb:
            used = self.rss_mb()
            if used >= self.memory_fraction * self.memory_mb:
                return LambdaLimitReached(f"the try reached Lambda's memory limit ({used:.0f} MB of the "
                                          f"function's {self.memory_mb} MB in use)", memory_mb=self.memory_mb)
        return None


@contextlib.contextmanager
def lambda_limit_guard(limits: LambdaLimits | None) -> Iterator[None]:
    """Raise :class:`LambdaLimitReached` in this (the main) thread once a limit is near; nothing without limits.

    A watcher thread polls the limits and signals the main thread, so a task blocked in a system call (a sleep,
    a subprocess wait) is interrupted too. Only the main thread can take a signal: elsewhere (local mode's
    threads, which have no Lambda limit) nothing is watched.
    """
    if limits is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    armed = [True]
    reasons: list[LambdaLimitReached] = []
    lock = threading.Lock()
    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        if armed[0] and reasons:
            armed[0] = False
            raise reasons[0]

    def watch() -> None:
        while not stop.wait(limits.poll_s):
            reason = limits.reached()
            if reason is None:
                continue
            with lock:  # never signal once the guarded block has ended
                if not stop.is_set():
                    reasons.append(reason)
                    signal.pthread_kill(threading.main_thread().ident or 0, _SIGNAL)
            return

    previous = signal.signal(_SIGNAL, on_signal)
    watcher = threading.Thread(target=watch, name="lambda-limit-guard", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        armed[0] = False
        with lock:
            stop.set()
        watcher.join()
        signal.signal(_SIGNAL, previous)


def can_run_on(executor: Executor, name: str) -> bool:
    """Whether ``executor`` delivers dispatches for executor ``name`` (a routing executor knows; a single
    executor, as tests and ``dags test`` use, takes everything)."""
    executors = getattr(executor, "executors", None)
    return name in executors if isinstance(executors, dict) else True


def fargate_compute(compute: dict[str, Any], memory_mb: int | None) -> dict[str, Any]:
    """The task's compute on Fargate: after a memory hand-off, the smallest Fargate size with at least twice the
    Lambda's memory (unless the task asked for more); otherwise the task's own (the task definition's default)."""
    if memory_mb is None or (compute.get("memory") or 0) >= 2 * memory_mb:
        return {**compute, "executor": FARGATE}
    cpu, memory = fargate_size_for(2 * memory_mb)
    return {**compute, "executor": FARGATE, "cpu": cpu, "memory": memory}


def hand_off(store: Store, dispatch: Dispatch, *, executor: Executor, reached: LambdaLimitReached,
             now: dt.datetime, log_sink: LogSink | None = None,
             usage: dict[str, Any] | None = None) -> Dispatch | None:
    """Send the stopped try to Fargate (see the module notes); None when it cannot go (no Fargate executor, or
    the try was ended elsewhere meanwhile). ``usage``: what the Lambda part used (``model.usage``), kept on the
    record by the hand-off's write, so the Fargate part's end adds to it."""
    key = dispatch.key
    if dispatch.handed_off or not can_run_on(executor, FARGATE):
        return None
    reason = str(reached)
    compute = fargate_compute(dispatch.compute, reached.memory_mb)
    sizes = {name: compute[name] for name in ("cpu", "memory") if compute.get(name)}
    store.remember_long_task(key.dag_id, key.task_id, executor=FARGATE, reason=reason, now=now,
                             compute=sizes if reached.memory_mb else None)
    moved = dataclasses.replace(dispatch, try_id=uuid.uuid4().hex, executor=FARGATE, compute=compute,
                                handed_off=True)
    note = f"{reason}; handed off to Fargate (try {dispatch.try_number} continues there, no retry spent)"
    if not store.apply_ti_change(key, expected=TaskInstanceState.RUNNING, state=TaskInstanceState.QUEUED,
                                 expected_try_id=dispatch.try_id,
                                 fields={"try_id": moved.try_id, "executor": FARGATE, "queued_at": now,
                                         "lease_expires_at": None, "note": note[:1000],
                                         **({"usage": usage} if usage is not None else {})}):
        log.warning("%s try %s was ended elsewhere before its hand-off", key.label, dispatch.try_number)
        return None
    if log_sink is not None:
        with contextlib.suppress(Exception):  # the log is a record of the hand-off, not a condition for it
            earlier = log_sink.read(key, dispatch.try_number) or ""
            log_sink.write(key, dispatch.try_number, f"{earlier}[{now.isoformat()}] {note}\n")
    log.warning("%s try %s: %s", key.label, dispatch.try_number, note)
    executor.dispatch([moved])
    return moved


class KeepEarlierLog:
    """A log sink that writes one try's log after the part an earlier worker wrote (the Lambda part of a try
    handed off to Fargate), so the try reads as one log, as a resumed try does in Airflow; the two parts together
    keep the log limit (``log_limit``)."""

    def __init__(self, sink: LogSink, key: TIKey, try_number: int) -> None:
        self.sink = sink
        self.key = key
        self.try_number = try_number
        self.earlier = sink.read(key, try_number) or ""

    def write(self, key: TIKey, try_number: int, text: str) -> None:
        if key == self.key and try_number == self.try_number:
            whole = CappedLog(limit_in_force())
            whole.add(self.earlier)
            whole.add(text)
            text = whole.text()
        self.sink.write(key, try_number, text)

    def read(self, key: TIKey, try_number: int) -> str | None:
        return self.sink.read(key, try_number)
