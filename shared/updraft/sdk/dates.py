"""Airflow 2's ``airflow.utils.dates`` helpers that DAG files still call, chiefly ``days_ago``.

Airflow 3 removed the module; Updraft keeps the functions DAG files use at parse time so that Airflow 2 files
run unchanged, with the deprecation warning Airflow 2 gave.
"""

from __future__ import annotations

import warnings
from collections.abc import Collection
from datetime import datetime, timedelta
from typing import Literal

from updraft.sdk import timezone

cron_presets: dict[str, str] = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@weekly": "0 0 * * 0",
    "@monthly": "0 0 1 * *",
    "@quarterly": "0 0 1 */3 *",
    "@yearly": "0 0 1 1 *",
}
"""Presets Airflow expands itself; others (``@annually``, ``@midnight``) go to croniter unchanged."""

TimeUnit = Literal["days", "hours", "minutes", "seconds"]


def days_ago(n: int, hour: int = 0, minute: int = 0, second: int = 0, microsecond: int = 0) -> datetime:
    """Midnight UTC (or the given time of day) ``n`` days before today, as Airflow 2 computed it.

    A start_date that moves every day is why Airflow deprecated this; it is kept because old files use it.
    """
    warnings.warn(
        "Function `days_ago` is deprecated and will be removed in Airflow 3.0. "
        "You can achieve equivalent behavior with `pendulum.today('UTC').add(days=-N, ...)`",
        DeprecationWarning,
        stacklevel=2,
    )
    today = timezone.utcnow().replace(hour=hour, minute=minute, second=second, microsecond=microsecond)
    return today - timedelta(days=n)


def parse_execution_date(execution_date_str: str) -> datetime:
    return timezone.parse(execution_date_str)


def datetime_to_nano(value: datetime) -> int:
    return int(value.timestamp() * 1_000_000_000)


def infer_time_unit(time_seconds_arr: Collection[float]) -> TimeUnit:
    """The unit Airflow's charts would pick for these durations (5400 s -> minutes, 36000 s -> hours)."""
    if not time_seconds_arr:
        return "hours"
    longest = max(time_seconds_arr)
    if longest <= 60 * 2:
        return "seconds"
    if longest <= 60 * 60 * 2:
        return "minutes"
    if longest <= 24 * 60 * 60 * 2:
        return "hours"
    return "days"


def scale_time_units(time_seconds_arr: Collection[float], unit: TimeUnit) -> Collection[float]:
    factor = {"minutes": 60, "hours": 60 * 60, "days": 24 * 60 * 60}.get(unit, 1)
    return [x / factor for x in time_seconds_arr]
