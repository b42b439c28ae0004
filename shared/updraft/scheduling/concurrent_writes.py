"""Independent single-item store requests sent at once: one round trip instead of one per item."""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
_writers: concurrent.futures.ThreadPoolExecutor | None = None
_writers_lock = threading.Lock()


def concurrently(calls: list[Callable[[], T]]) -> list[T]:
    """Run independent single-item writes at once and return their results in order.

    Each limit is its own item and each write its own condition, so their order never mattered; sending them
    together makes a claim or a release cost one round trip instead of one per limit, which is most of the
    time between one task's end and the next one's start. The first exception is raised after all finished.
    """
    if len(calls) <= 1:
        return [call() for call in calls]
    pool = _pool()
    futures = [pool.submit(call) for call in calls]
    concurrent.futures.wait(futures)
    return [future.result() for future in futures]


def _pool() -> concurrent.futures.ThreadPoolExecutor:
    global _writers
    with _writers_lock:
        if _writers is None:
            _writers = concurrent.futures.ThreadPoolExecutor(8, thread_name_prefix="updraft-writes")
        return _writers
