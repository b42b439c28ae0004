"""A backfill as Airflow 3 keeps it (``airflow.models.backfill.Backfill``): a date range of one DAG to run, and
what the scheduler has made of it so far.

Airflow writes every run of the range at creation (queued) and its scheduler starts at most the backfill's
``max_active_runs`` of them. Updraft keeps the plan instead (the DAG version's timetable between the dates, as
it stood at ``created_at``) and its scheduler creates the next runs as earlier ones finish, so a long backfill
never floods the active-runs index the scheduler reads on every tick. ``created`` counts the plan's entries
already turned into runs; ``skipped`` are the dates Airflow records as ``BackfillDagRun`` rows with an
``exception_reason`` (a run already exists or is in flight).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from enum import StrEnum
from typing import Any


class ReprocessBehavior(StrEnum):
    """What a backfill does with a date that already has a run (Airflow's names)."""

    FAILED = "failed"  # rerun it when it failed
    COMPLETED = "completed"  # rerun it when it finished, failed or not
    NONE = "none"  # leave it


class SkipReason(StrEnum):
    """Airflow's ``BackfillDagRunExceptionReason``: why a date of the range gets no run."""

    IN_FLIGHT = "in flight"
    ALREADY_EXISTS = "already exists"


DEFAULT_MAX_ACTIVE_RUNS = 10  # Airflow's BackfillPostBody default


@dataclasses.dataclass
class Backfill:
    id: int
    dag_id: str
    from_date: dt.datetime
    to_date: dt.datetime
    dag_hash: str  # the DAG version whose timetable made the plan and whose runs it creates
    created_at: dt.datetime
    updated_at: dt.datetime
    dag_run_conf: dict[str, Any] = dataclasses.field(default_factory=dict)
    is_paused: bool = False
    reprocess_behavior: ReprocessBehavior = ReprocessBehavior.NONE
    max_active_runs: int = DEFAULT_MAX_ACTIVE_RUNS
    run_backwards: bool = False
    completed_at: dt.datetime | None = None
    triggering_user_name: str | None = None
    created: int = 0  # entries of the plan made into runs, in plan order
    skipped: dict[str, str] = dataclasses.field(default_factory=dict)  # logical date (ISO, UTC) -> SkipReason

    @property
    def is_active(self) -> bool:
        return self.completed_at is None
