"""Scheduling: the scheduler's pass and its tries' lifecycle; the pure decisions and the user commands are
subpackages (``decisions``, ``commands``), each with its own face.

The pass (``Scheduler``) creates runs, evaluates them, claims the limit slots a ready try needs and dispatches it;
a try then starts, may defer or wait, and finishes (``start_try``, ``finish_try``), and its end schedules what comes
downstream. Assets, callbacks and wake-ups are the pass's too. The modules at this level hold that I/O; what they
decide is in ``decisions``. Order inside: decisions < this level < commands (a command uses the pass's holding and
run slots; the pass never calls a command).

This face is what code outside scheduling imports; each name loads its module on first use (``faces``), so
importing ``updraft.scheduling.commands`` (as the parser does) does not load the scheduler. ``pools_occupancy`` and
``runs_holding`` are ``pool_occupancy.pool_occupancy`` and ``run_slots.holding``, renamed because a face cannot
export a submodule's name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from updraft.scheduling.faces import lazy_names

if TYPE_CHECKING:
    from updraft.scheduling.asset_events import publish_outlet_events, record_asset_event
    from updraft.scheduling.asset_sources import handle_source_event, watcher_extra
    from updraft.scheduling.asset_triggers import create_asset_triggered_runs, materialize
    from updraft.scheduling.asset_watchers import still_wanted
    from updraft.scheduling.claim_shares import Share
    from updraft.scheduling.dag_callbacks import claim_callback
    from updraft.scheduling.dag_versions import pinned_dag
    from updraft.scheduling.deferrals import Waits, resume_try, start_wait, stop_waits
    from updraft.scheduling.downstream import hand_over_for, schedule_downstream
    from updraft.scheduling.holding import held_limit_ids, limits_table
    from updraft.scheduling.pass_invokes import INVOKE_CONCURRENCY
    from updraft.scheduling.pass_metrics import PassMetrics
    from updraft.scheduling.pass_report import PassReport
    from updraft.scheduling.pool_occupancy import pool_occupancy as pools_occupancy
    from updraft.scheduling.run_creation import time_restriction, timetable_of
    from updraft.scheduling.run_slots import holding as runs_holding
    from updraft.scheduling.scheduler import Scheduler, SchedulerConfig
    from updraft.scheduling.try_lifecycle import (
        DEFAULT_LEASE,
        NextHop,
        TryResult,
        finish_try,
        holds_a_named_pool,
        next_hop,
        start_try,
    )
    from updraft.scheduling.wakeups import run_due_now, wake_for_retry

_HOMES = {
    "publish_outlet_events": "updraft.scheduling.asset_events",
    "record_asset_event": "updraft.scheduling.asset_events",
    "handle_source_event": "updraft.scheduling.asset_sources",
    "watcher_extra": "updraft.scheduling.asset_sources",
    "create_asset_triggered_runs": "updraft.scheduling.asset_triggers",
    "materialize": "updraft.scheduling.asset_triggers",
    "still_wanted": "updraft.scheduling.asset_watchers",
    "Share": "updraft.scheduling.claim_shares",
    "claim_callback": "updraft.scheduling.dag_callbacks",
    "pinned_dag": "updraft.scheduling.dag_versions",
    "Waits": "updraft.scheduling.deferrals",
    "resume_try": "updraft.scheduling.deferrals",
    "start_wait": "updraft.scheduling.deferrals",
    "stop_waits": "updraft.scheduling.deferrals",
    "hand_over_for": "updraft.scheduling.downstream",
    "schedule_downstream": "updraft.scheduling.downstream",
    "held_limit_ids": "updraft.scheduling.holding",
    "limits_table": "updraft.scheduling.holding",
    "INVOKE_CONCURRENCY": "updraft.scheduling.pass_invokes",
    "PassMetrics": "updraft.scheduling.pass_metrics",
    "PassReport": "updraft.scheduling.pass_report",
    "pools_occupancy": "updraft.scheduling.pool_occupancy:pool_occupancy",
    "time_restriction": "updraft.scheduling.run_creation",
    "timetable_of": "updraft.scheduling.run_creation",
    "runs_holding": "updraft.scheduling.run_slots:holding",
    "Scheduler": "updraft.scheduling.scheduler",
    "SchedulerConfig": "updraft.scheduling.scheduler",
    "DEFAULT_LEASE": "updraft.scheduling.try_lifecycle",
    "NextHop": "updraft.scheduling.try_lifecycle",
    "TryResult": "updraft.scheduling.try_lifecycle",
    "finish_try": "updraft.scheduling.try_lifecycle",
    "holds_a_named_pool": "updraft.scheduling.try_lifecycle",
    "next_hop": "updraft.scheduling.try_lifecycle",
    "start_try": "updraft.scheduling.try_lifecycle",
    "run_due_now": "updraft.scheduling.wakeups",
    "wake_for_retry": "updraft.scheduling.wakeups",
}

__all__ = [
    "DEFAULT_LEASE", "INVOKE_CONCURRENCY", "NextHop", "PassMetrics", "PassReport", "Scheduler", "SchedulerConfig",
    "Share", "TryResult", "Waits",
    "claim_callback", "create_asset_triggered_runs", "finish_try", "hand_over_for", "handle_source_event",
    "held_limit_ids", "holds_a_named_pool",
    "limits_table", "materialize", "next_hop", "pinned_dag", "pools_occupancy", "publish_outlet_events",
    "record_asset_event", "resume_try", "run_due_now", "runs_holding", "schedule_downstream",
    "start_try", "start_wait", "still_wanted", "stop_waits", "time_restriction", "timetable_of", "wake_for_retry",
    "watcher_extra",
]

__getattr__ = lazy_names(__name__, _HOMES)
