"""Airflow's ``State`` constants (``airflow.utils.state.State``) over Updraft's task instance and DAG run states,
for provider code written before the enums (``State.SUCCESS``, ``State.finished_dr_states``)."""

from __future__ import annotations

from updraft.model.states import (
    FAILED_TI_STATES,
    FINISHED_RUN_STATES,
    FINISHED_TI_STATES,
    SUCCESS_TI_STATES,
    UNFINISHED_RUN_STATES,
    UNFINISHED_TI_STATES,
    DagRunState,
    TaskInstanceState,
)


class State:
    """Task instance states (and the three DAG run states they share) as class constants."""

    SUCCESS = TaskInstanceState.SUCCESS
    RUNNING = TaskInstanceState.RUNNING
    FAILED = TaskInstanceState.FAILED
    NONE = None
    REMOVED = TaskInstanceState.REMOVED
    SCHEDULED = TaskInstanceState.SCHEDULED
    QUEUED = TaskInstanceState.QUEUED
    RESTARTING = TaskInstanceState.RESTARTING
    UP_FOR_RETRY = TaskInstanceState.UP_FOR_RETRY
    UP_FOR_RESCHEDULE = TaskInstanceState.UP_FOR_RESCHEDULE
    UPSTREAM_FAILED = TaskInstanceState.UPSTREAM_FAILED
    SKIPPED = TaskInstanceState.SKIPPED
    DEFERRED = TaskInstanceState.DEFERRED

    finished_dr_states: frozenset[DagRunState] = FINISHED_RUN_STATES
    unfinished_dr_states: frozenset[DagRunState] = UNFINISHED_RUN_STATES
    task_states: tuple[TaskInstanceState | None, ...] = (None, *TaskInstanceState)
    dag_states: tuple[DagRunState, ...] = (DagRunState.QUEUED, DagRunState.SUCCESS, DagRunState.RUNNING,
                                           DagRunState.FAILED)
    finished: frozenset[TaskInstanceState] = FINISHED_TI_STATES
    unfinished: frozenset[TaskInstanceState | None] = UNFINISHED_TI_STATES
    failed_states: frozenset[TaskInstanceState] = FAILED_TI_STATES
    success_states: frozenset[TaskInstanceState] = SUCCESS_TI_STATES
