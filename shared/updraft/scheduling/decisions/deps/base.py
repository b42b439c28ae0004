"""What every dependency rule answers: one ``DepStatus`` per rule, so "why is my task not running?" has a reply.

Airflow's ``BaseTIDep`` yields ``TIDepStatus(dep_name, passed, reason)``; the names and reasons here follow it so
that what the UI shows reads like Airflow's "Task Instance Details" page.
"""

from __future__ import annotations

from typing import NamedTuple


class DepStatus(NamedTuple):
    name: str
    passed: bool
    reason: str


def passing(name: str, reason: str) -> DepStatus:
    return DepStatus(name, True, reason)


def failing(name: str, reason: str) -> DepStatus:
    return DepStatus(name, False, reason)
