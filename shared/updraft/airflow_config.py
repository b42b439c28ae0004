"""Airflow's configuration options, read as Airflow reads them from its ``AIRFLOW__SECTION__KEY`` variables.

The defaults Airflow fixes from its configuration (a DAG's max_active_tasks and catchup, an operator's retries,
the scheduler's retry cap) are decided by the environment of whoever applies them: the parser for DAG and task
defaults, the scheduler for its own. One reader, so every option is parsed and its errors worded the same way.
"""

from __future__ import annotations

import os
from datetime import timedelta


def variable(section: str, key: str) -> str:
    return f"AIRFLOW__{section}__{key}".upper()


def get(section: str, key: str, default: str) -> str:
    """The option's value, or ``default`` when its variable is unset or blank."""
    return os.environ.get(variable(section, key), "").strip() or default


def get_int(section: str, key: str, default: int) -> int:
    raw = get(section, key, str(default))
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"{variable(section, key)} must be an integer, got {raw!r}") from None


def get_bool(section: str, key: str, default: bool = False) -> bool:
    raw = get(section, key, "").lower()
    if not raw:
        return default
    if raw in ("t", "true", "1"):
        return True
    if raw in ("f", "false", "0"):
        return False
    raise ValueError(f'{variable(section, key)} must be a boolean ("True" or "False"), got {raw!r}')


def get_seconds(section: str, key: str) -> timedelta | None:
    """An optional duration in seconds (unset: None)."""
    return timedelta(seconds=get_int(section, key, 0)) if get(section, key, "") else None
