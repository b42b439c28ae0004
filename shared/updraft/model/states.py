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
RUN = DagRunState

# Every grouping of states lives here, one constant per meaning (tests/unit/model/test_state_homes.py keeps it so).
# Groupings with the same members but different meanings are separate constants on purpose: each says why.

# -- task instance states ----------------------------------------------------------------------------------------
# Airflow's State.finished: the instance needs no further action (it ran, failed, or never will run).
FINISHED_TI_STATES = frozenset({TI.SUCCESS, TI.FAILED, TI.SKIPPED, TI.UPSTREAM_FAILED, TI.REMOVED})
# Airflow's State.unfinished (None is "no status": a task nobody has touched). Every state is in exactly one of
# FINISHED_TI_STATES and this (Updraft has no awaiting_input).
UNFINISHED_TI_STATES = frozenset({None, TI.SCHEDULED, TI.QUEUED, TI.RUNNING, TI.UP_FOR_RETRY, TI.UP_FOR_RESCHEDULE,
                                  TI.DEFERRED, TI.RESTARTING})
# The unfinished states the scheduler may move forward (decide on and claim); the others wait on a worker or trigger.
SCHEDULABLE_TI_STATES = frozenset({None, TI.SCHEDULED, TI.UP_FOR_RETRY, TI.UP_FOR_RESCHEDULE})
# Airflow's State.success_states: an instance that counts as succeeded (a run whose leaves all have one succeeds).
SUCCESS_TI_STATES = frozenset({TI.SUCCESS, TI.SKIPPED})
# Airflow's State.failed_states: an instance that failed or could not run because of a failure (also what a
# clear's ``only_failed`` selects).
FAILED_TI_STATES = frozenset({TI.FAILED, TI.UPSTREAM_FAILED})
# A try whose run failed, retried or not (failure callbacks and metrics): unlike FAILED_TI_STATES it holds
# up_for_retry and not upstream_failed, which no try ran into.
FAILED_TRY_STATES = frozenset({TI.FAILED, TI.UP_FOR_RETRY})
# A try handed to a worker (queued for it, or running): it holds its limit slots (pool, max_active_tasks,
# parallelism) while in them.
SLOT_HOLDING_STATES = frozenset({TI.QUEUED, TI.RUNNING})
# A try that may hold limits (its ticket): the slot-holding states and deferred (a pool with
# include_deferred keeps its slot). A write taking a try out of these states releases what it holds.
TICKET_HOLDING_STATES = SLOT_HOLDING_STATES | {TI.DEFERRED}
# Running on a worker or bound for one (scheduled, queued, running): nothing to fast-forward while one is.
WORKER_BOUND_STATES = SLOT_HOLDING_STATES | {TI.SCHEDULED}
# What a task's process may report its try ended in (the supervisor rejects any other report).
TASK_RESULT_STATES = frozenset({TI.SUCCESS, TI.FAILED, TI.SKIPPED, TI.DEFERRED, TI.UP_FOR_RESCHEDULE})
# A try that ran on a worker and ended its invocation, whose record holds its usage: skipped is left out (a task
# a branch skipped never ran, and one that skipped itself is not told apart from it); up_for_retry is a failed try.
RAN_TRY_END_STATES = frozenset({TI.SUCCESS, TI.FAILED, TI.UP_FOR_RETRY, TI.UP_FOR_RESCHEDULE, TI.DEFERRED})
# What a task instance may be marked (Airflow's patch ``new_state`` choices), in Airflow's order.
MARKABLE_TI_STATES = (TI.SUCCESS, TI.FAILED, TI.SKIPPED)
# Airflow's running states for a run's mark: their tries take the run's state, every other unfinished one is skipped.
RUNNING_FOR_MARK = frozenset({TI.RUNNING, TI.DEFERRED, TI.UP_FOR_RESCHEDULE})
# The instances fail_fast leaves as they are. Airflow 3.3.2's ``_stop_remaining_tasks`` names success and failed;
# skipped is kept here too, so a skipped instance is not skipped again (its end date and note stay).
KEPT_BY_FAIL_FAST = frozenset({TI.SUCCESS, TI.FAILED, TI.SKIPPED})
# Airflow's API vocabulary of task instance states, in its order: Updraft's states and awaiting_input (Airflow's
# human-in-the-loop wait, which Updraft never enters but the API accepts and counts).
AWAITING_INPUT = "awaiting_input"
API_TI_STATES: tuple[str, ...] = (TI.REMOVED, TI.SCHEDULED, TI.QUEUED, TI.RUNNING, TI.SUCCESS, TI.RESTARTING,
                                  TI.FAILED, TI.UP_FOR_RETRY, TI.UP_FOR_RESCHEDULE, TI.UPSTREAM_FAILED, TI.SKIPPED,
                                  TI.DEFERRED, AWAITING_INPUT)

# -- DAG run states ----------------------------------------------------------------------------------------------
# Airflow's State.finished_dr_states: the run has ended.
FINISHED_RUN_STATES = frozenset({RUN.SUCCESS, RUN.FAILED})
# Airflow's State.unfinished_dr_states: the run waits to start or is running (the store indexes these as active).
UNFINISHED_RUN_STATES = frozenset({RUN.QUEUED, RUN.RUNNING})
# Airflow's DagRunMutableStates: what a run may be patched to, and the states it may be deleted in.
MUTABLE_RUN_STATES = (RUN.QUEUED, RUN.SUCCESS, RUN.FAILED)
