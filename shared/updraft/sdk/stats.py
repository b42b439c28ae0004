"""Airflow's ``Stats`` as DAG code sees it: every metric call is accepted and dropped.

Updraft does not publish metrics emitted by DAG code, hooks or operators (Airflow sends them to StatsD or
OpenTelemetry when configured): Updraft's own metrics go to CloudWatch from its functions, and a task's process
has no metrics sink. Provider code calls ``Stats.incr(...)`` / ``Stats.timing(...)`` on its normal paths, so the
calls must not fail; nothing is recorded, and ``Stats.enabled`` says so.
"""

from __future__ import annotations

from typing import Any


class _Timer:
    """What ``Stats.timer()`` returns: times nothing, as Airflow's timer when metrics are off."""

    duration: float | None = None

    def __enter__(self) -> _Timer:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def start(self) -> _Timer:
        return self

    def stop(self, send: bool = True) -> None:
        return None


class _NoStats:
    """Airflow's ``NoStatsLogger``: the metrics interface, recording nothing (module doc)."""

    enabled = False

    def incr(self, stat: str, count: int = 1, rate: float = 1, *, tags: dict[str, Any] | None = None) -> None:
        return None

    def decr(self, stat: str, count: int = 1, rate: float = 1, *, tags: dict[str, Any] | None = None) -> None:
        return None

    def gauge(self, stat: str, value: float, rate: float = 1, delta: bool = False, *,
              tags: dict[str, Any] | None = None) -> None:
        return None

    def timing(self, stat: str, dt: Any, *, tags: dict[str, Any] | None = None) -> None:
        return None

    def timer(self, *args: Any, **kwargs: Any) -> _Timer:
        return _Timer()



Stats = _NoStats()
