"""An executor that only records what it was given: for tests and for driving workers by hand."""

from __future__ import annotations

import threading

from updraft.executors.base import Dispatch


class RecordingExecutor:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.dispatched: list[Dispatch] = []

    def dispatch(self, items: list[Dispatch]) -> None:
        with self._lock:
            self.dispatched.extend(items)

    def take(self) -> list[Dispatch]:
        """Everything dispatched since the last call (so a test can play the workers)."""
        with self._lock:
            items, self.dispatched = self.dispatched, []
        return items
