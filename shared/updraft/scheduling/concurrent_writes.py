"""Independent single-item store requests sent at once: one round trip instead of one per item."""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")
A = TypeVar("A")
B = TypeVar("B")
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


def concurrently2(first: Callable[[], A], second: Callable[[], B]) -> tuple[A, B]:
    """Two independent requests of different result types at once (a run with its DAG row, and its instances)."""
    pool = _pool()
    a, b = pool.submit(first), pool.submit(second)
    futures: list[concurrent.futures.Future[Any]] = [a, b]  # Any: only waited on, each result read typed
    concurrent.futures.wait(futures)  # both done before any error is raised, as in concurrently
    return a.result(), b.result()


def _pool() -> concurrent.futures.ThreadPoolExecutor:
    global _writers
    with _writers_lock:
        if _writers is None:
            _writers = concurrent.futures.ThreadPoolExecutor(8, thread_name_prefix="updraft-writes")
        return _writers
