"""A small bounded, thread-safe LRU map: the process's one cache of serialized DAG versions."""

from __future__ import annotations

import collections
import threading
from collections.abc import Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LruCache(Generic[K, V]):
    """Keeps the ``size`` most recently used entries. Values are shared by every caller: treat them as
    read-only."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: collections.OrderedDict[K, V] = collections.OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """The value, or None when absent (None is never stored)."""
        with self._lock:
            if key not in self._entries:
                return None
            self._entries.move_to_end(key)
            return self._entries[key]

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)
