"""Scheduling's user commands: the writes a user, the API, the CLI or the parser asks for, outside the pass.

Trigger a run, create/pause/cancel a backfill, apply a clear or a mark (decided by ``updraft.scheduling.decisions``),
set or delete a run, delete a DAG, register a parsed file and pause a DAG, and answer "why is this task not
running". Each reads what it needs and writes through the store's named transitions; the scheduler's pass
(``updraft.scheduling``) then carries the run on. A command's error is a domain error the API turns into its HTTP
answer (``updraft.api.domain_errors``).

This face is what code outside scheduling imports; each name loads its module on first use (``faces``). Backfills'
own ``set_paused``, ``cancel`` and ``dry_run`` are named for the backfill here, beside the DAG's ``set_paused``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from updraft.scheduling.faces import lazy_names

if TYPE_CHECKING:
    from updraft.scheduling.commands.backfill_commands import (
        AlreadyRunningBackfill,
        BackfillCompleted,
        BackfillNotFound,
        BackfillRequest,
        InvalidBackfill,
        RerunKeepsConf,
        create_backfill,
    )
    from updraft.scheduling.commands.backfill_commands import cancel as cancel_backfill
    from updraft.scheduling.commands.backfill_commands import dry_run as backfill_dry_run
    from updraft.scheduling.commands.backfill_commands import set_paused as set_backfill_paused
    from updraft.scheduling.commands.dag_deletion import DagStillRunning, delete_dag
    from updraft.scheduling.commands.dag_registration import (
        record_parse_failure,
        register_parsed_file,
        remove_dag_file,
        set_paused,
    )
    from updraft.scheduling.commands.manual_changes import apply_marks, apply_resets, delete_run, set_run_state
    from updraft.scheduling.commands.marker_clears import MarkerRecursionError, dependent_clears
    from updraft.scheduling.commands.triggering import DagRunAlreadyExists, InvalidRunId, trigger_dag
    from updraft.scheduling.commands.why import why_not_running

_HOMES = {
    "AlreadyRunningBackfill": "updraft.scheduling.commands.backfill_commands",
    "BackfillCompleted": "updraft.scheduling.commands.backfill_commands",
    "BackfillNotFound": "updraft.scheduling.commands.backfill_commands",
    "BackfillRequest": "updraft.scheduling.commands.backfill_commands",
    "InvalidBackfill": "updraft.scheduling.commands.backfill_commands",
    "RerunKeepsConf": "updraft.scheduling.commands.backfill_commands",
    "create_backfill": "updraft.scheduling.commands.backfill_commands",
    "cancel_backfill": "updraft.scheduling.commands.backfill_commands:cancel",
    "backfill_dry_run": "updraft.scheduling.commands.backfill_commands:dry_run",
    "set_backfill_paused": "updraft.scheduling.commands.backfill_commands:set_paused",
    "DagStillRunning": "updraft.scheduling.commands.dag_deletion",
    "delete_dag": "updraft.scheduling.commands.dag_deletion",
    "record_parse_failure": "updraft.scheduling.commands.dag_registration",
    "register_parsed_file": "updraft.scheduling.commands.dag_registration",
    "remove_dag_file": "updraft.scheduling.commands.dag_registration",
    "set_paused": "updraft.scheduling.commands.dag_registration",
    "apply_marks": "updraft.scheduling.commands.manual_changes",
    "apply_resets": "updraft.scheduling.commands.manual_changes",
    "delete_run": "updraft.scheduling.commands.manual_changes",
    "set_run_state": "updraft.scheduling.commands.manual_changes",
    "MarkerRecursionError": "updraft.scheduling.commands.marker_clears",
    "dependent_clears": "updraft.scheduling.commands.marker_clears",
    "DagRunAlreadyExists": "updraft.scheduling.commands.triggering",
    "InvalidRunId": "updraft.scheduling.commands.triggering",
    "trigger_dag": "updraft.scheduling.commands.triggering",
    "why_not_running": "updraft.scheduling.commands.why",
}

__all__ = [
    "AlreadyRunningBackfill", "BackfillCompleted", "BackfillNotFound", "BackfillRequest", "DagRunAlreadyExists",
    "DagStillRunning", "InvalidBackfill", "InvalidRunId", "MarkerRecursionError", "RerunKeepsConf", "apply_marks",
    "apply_resets", "backfill_dry_run", "cancel_backfill", "create_backfill", "delete_dag", "delete_run",
    "dependent_clears", "record_parse_failure", "register_parsed_file", "remove_dag_file", "set_backfill_paused",
    "set_paused", "set_run_state", "trigger_dag", "why_not_running",
]

__getattr__ = lazy_names(__name__, _HOMES)
