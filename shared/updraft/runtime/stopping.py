"""A Fargate worker being stopped (ECS ``StopTask``, a scale-in, a spot reclaim) ends its try as Airflow ends a
killed one, and keeps the try's log.

ECS sends SIGTERM, then SIGKILL after the container's ``stopTimeout`` (30 s by default). On SIGTERM,
:class:`WorkerStopped` is raised in the main thread, where the task runs: the try fails with it as with any
error (its traceback in the log, failure or retry callbacks, retried if it has retries left: what Airflow does
with a task whose worker went away, which its scheduler fails by heartbeat timeout), the log is written whole and
the result recorded through the usual fenced ``finish_try``. Task code that swallows the exception does not keep
the container: ``grace_s`` later, if the worker has not finished, the logs of the tries still open are written as
far as they got (``logs.write_open_logs``) and the process exits 143; the scheduler's lease check fails the try.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from typing import Any

from updraft.runtime.logs import write_open_logs
from updraft.sdk.exceptions import AirflowException

GRACE_ENV = "UPDRAFT_STOP_GRACE_SECONDS"
DEFAULT_GRACE_S = 20.0  # within ECS's default stopTimeout of 30 s


class WorkerStopped(AirflowException):
    """The process running the try was told to stop (SIGTERM) before the try ended."""


@contextlib.contextmanager
def fail_try_on_sigterm(grace_s: float | None = None) -> Iterator[None]:
    """While inside, SIGTERM raises :class:`WorkerStopped` in the main thread (once), and the process exits
    ``grace_s`` later if it is still running; the previous handler is restored on the way out."""
    grace = float(os.environ.get(GRACE_ENV, DEFAULT_GRACE_S)) if grace_s is None else grace_s
    received: list[int] = []
    timers: list[threading.Timer] = []

    def last_resort(signum: int) -> None:
        write_open_logs(f"the worker was stopped ({signal.Signals(signum).name}) and the try did not end "
                        f"within {grace:g} s")
        os._exit(128 + signum)

    def on_sigterm(signum: int, frame: Any) -> None:
        if received:
            return  # ECS sends one; a second changes nothing
        received.append(signum)
        timer = threading.Timer(grace, last_resort, args=(signum,))
        timer.daemon = True
        timers.append(timer)
        timer.start()
        raise WorkerStopped(f"the worker running this try was stopped ({signal.Signals(signum).name}) "
                            "before the try ended")

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        for timer in timers:  # the try ended (or the process is leaving anyway): no last resort needed
            timer.cancel()
