"""The ordered secrets backends behind ``Variable.get`` and ``Connection.get``.

Airflow asks its backends in order: the configured secrets backend (``[secrets] backend``), then environment
variables, then the metastore; a backend that raises is logged and skipped so that one broken store cannot hide
the rest, and the caller's not-found error then says what failed. Variables and connections follow that rule
alike and differ only in the environment prefix, how loudly a failure is logged and what counts as found.

Caching: while a try runs (:func:`try_cache`), each key is looked up at most once per thread; a write or delete
through ``Variable`` forgets its key. Outside a try nothing is cached, so a DAG file parsed again sees new values.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

T = TypeVar("T")

_local = threading.local()


@contextlib.contextmanager
def try_cache() -> Iterator[None]:
    """Cache lookups in this thread until the block ends (one try: Airflow's per-process secrets cache)."""
    previous = getattr(_local, "cache", None)
    _local.cache = {}
    try:
        yield
    finally:
        _local.cache = previous


def _cache() -> dict[tuple[str, str], Any] | None:
    return getattr(_local, "cache", None)


class BackendChain(Generic[T]):
    """The configured backends, ``AIRFLOW_<KIND>_<KEY>`` environment variables, then the registered stores."""

    def __init__(self, env_prefix: str, *, kind: str, log_failure: Callable[..., Any],
                 found: Callable[[Any], bool] = lambda value: value is not None) -> None:
        self._env_prefix = env_prefix
        self._kind = kind
        self._found = found  # what counts as an answer (a connection's empty string does not)
        # The caller's logger method (exception, debug), so records keep its logger name and level.
        self._log_failure = log_failure
        self._before: list[Callable[[str], T | None]] = []
        self._getters: list[Callable[[str], T | None]] = [self._from_environment]

    def _from_environment(self, key: str) -> Any:
        return os.environ.get(self._env_prefix + key.upper())

    def register(self, getter: Callable[[str], T | None], *, before_environment: bool = False) -> None:
        """Ask ``getter`` after those registered earlier; a configured secrets backend goes before the
        environment (Airflow's order), a store after it."""
        (self._before if before_environment else self._getters).append(getter)

    def reset(self) -> None:
        self._before.clear()
        self._getters[:] = [self._from_environment]

    def forget(self, key: str) -> None:
        """Drop ``key`` from this try's cache (it was just written or deleted)."""
        cache = _cache()
        if cache is not None:
            cache.pop((self._kind, key), None)

    def first(self, key: str, failures: list[str] | None = None) -> T | None:
        """The first backend's answer for ``key`` (None: no backend has it), from this try's cache when there is
        one. Each failing backend is logged and, when ``failures`` is given, described there."""
        cache = _cache()
        if cache is not None and (self._kind, key) in cache:
            return cache[(self._kind, key)]  # type: ignore[no-any-return]
        found = next(self.answers(key, failures), None)
        if cache is not None and found is not None:
            cache[(self._kind, key)] = found
        return found

    def answers(self, key: str, failures: list[str] | None = None) -> Iterator[T]:
        """Each backend's answer for ``key``, asking the next one only when the caller reads on."""
        for getter in (*self._before, *self._getters):
            try:
                value = getter(key)
            except Exception as exc:
                self._log_failure("Unable to retrieve %s from secrets backend (%s). Checking subsequent secrets "
                                  "backend.", self._kind, getattr(getter, "__qualname__", type(getter).__name__))
                if failures is not None:
                    failures.append(f"{type(exc).__name__}: {exc}")
                continue
            if self._found(value):
                yield value  # type: ignore[misc]
