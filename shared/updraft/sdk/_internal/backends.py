"""The ordered secrets backends behind ``Variable.get`` and ``Connection.get``.

Airflow asks its backends in order, environment variables first, and a backend that raises is logged and
skipped so that one broken store cannot hide the rest. Variables and connections follow that rule alike and
differ only in the environment prefix, how loudly a failure is logged and what counts as found.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class BackendChain(Generic[T]):
    """``AIRFLOW_<KIND>_<KEY>`` environment variables, then each registered getter in registration order."""

    def __init__(self, env_prefix: str, *, kind: str, log_failure: Callable[..., Any]) -> None:
        self._env_prefix = env_prefix
        self._kind = kind
        # The caller's logger method (exception, debug), so records keep its logger name and level.
        self._log_failure = log_failure
        self._getters: list[Callable[[str], T | None]] = [self._from_environment]

    def _from_environment(self, key: str) -> Any:
        return os.environ.get(self._env_prefix + key.upper())

    def register(self, getter: Callable[[str], T | None]) -> None:
        self._getters.append(getter)

    def reset(self) -> None:
        self._getters[:] = [self._from_environment]

    def answers(self, key: str) -> Iterator[T]:
        """Each backend's non-None answer for ``key``, asking the next one only when the caller reads on."""
        for getter in self._getters:
            try:
                value = getter(key)
            except Exception:
                self._log_failure("Unable to retrieve %s from secrets backend (%s). Checking subsequent secrets "
                                  "backend.", self._kind, getattr(getter, "__qualname__", type(getter).__name__))
                continue
            if value is not None:
                yield value
