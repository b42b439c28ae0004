"""Task-instance and DAG-run states with Airflow 3's names, and the groupings the scheduler reasons with."""

from __future__ import annotations

from enum import StrEnum


class TaskInstanceState(StrEnum):
    # "none" is represented by the absence of a task-instance item: a task nobody has touched yet.
    SCHEDULED = "scheduled"
    QUEUED = "queued"
    RUNNING = "running"
    SUCCESS = "success"
    FAILED = "failed"
    UP_FOR_RETRY = "up_for_retry"
    UP_FOR_RESCHEDULE = "up_for_reschedule"
    UPSTREAM_FAILED = "upstream_failed"
    SKIPPED = "skipped"
    REMOVED = "removed"
    DEFERRED = "deferred"
    RESTARTING = "restarting"


class DagRunState(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCESS = "success"
    FAILED = "failed"


class DagRunType(StrEnum):
    MANUAL = "manual"
    SCHEDULED = "scheduled"
    BACKFILL = "backfill"
    ASSET_TRIGGERED = "asset_triggered"
    OPERATOR_TRIGGERED = "operator_triggered"  # created by a TriggerDagRunOperator (Airflow 3.3)


TI = TaskInstanceState
FINISHED_TI_STATES = frozenset({TI.SUCCESS, TI.FAILED, TI.SKIPPED, TI.UPSTREAM_FAILED, TI.REMOVED})
# States that hold limit slots (pool, max_active_tasks, parallelism) while in them.
SLOT_HOLDING_STATES = frozenset({TI.QUEUED, TI.RUNNING})
FAILED_TI_STATES = frozenset({TI.FAILED, TI.UPSTREAM_FAILED})
FINISHED_RUN_STATES = frozenset({DagRunState.SUCCESS, DagRunState.FAILED})
