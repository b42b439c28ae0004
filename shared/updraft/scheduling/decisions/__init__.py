"""Scheduling's pure decisions: from records and a serialized DAG to the changes to make, with no store and no AWS.

What a pass or a user command decides, as data: a run's evaluation (each instance's next state and the run's,
``evaluate_run``), Airflow's dependency rules (``deps``), retries and backstops, what a clear resets and what a mark
sets, which tasks a branch skips, and why a task is blocked. Their callers (the pass at ``updraft.scheduling``, the
user commands at ``updraft.scheduling.commands``) read the records and write the changes, one conditional write each.
Two decisions read helpers that live with the pass: ``counted_ends`` (mapped ends a trigger rule counts) and
``deferrals.overdue_resume`` (a resumed try past its grace); both are pure.

This face is what code outside scheduling imports; each name loads its module on first use (``faces``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from updraft.scheduling.faces import lazy_names

if TYPE_CHECKING:
    from updraft.scheduling.decisions.blocked import BlockedReason
    from updraft.scheduling.decisions.changes import RunEvaluation, TIChange
    from updraft.scheduling.decisions.clearing import Selection, relatives, resets, to_clear, with_relatives
    from updraft.scheduling.decisions.evaluation import evaluate_run, evaluate_tasks
    from updraft.scheduling.decisions.marking import marked_selection, run_mark, runs_in_range, task_marks
    from updraft.scheduling.decisions.retries import will_retry
    from updraft.scheduling.decisions.skips import branch_skips, group_task_ids, short_circuit_skips, task_groups

_HOMES = {
    "BlockedReason": "updraft.scheduling.decisions.blocked",
    "RunEvaluation": "updraft.scheduling.decisions.changes",
    "TIChange": "updraft.scheduling.decisions.changes",
    "Selection": "updraft.scheduling.decisions.clearing",
    "relatives": "updraft.scheduling.decisions.clearing",
    "resets": "updraft.scheduling.decisions.clearing",
    "to_clear": "updraft.scheduling.decisions.clearing",
    "with_relatives": "updraft.scheduling.decisions.clearing",
    "evaluate_run": "updraft.scheduling.decisions.evaluation",
    "evaluate_tasks": "updraft.scheduling.decisions.evaluation",
    "marked_selection": "updraft.scheduling.decisions.marking",
    "run_mark": "updraft.scheduling.decisions.marking",
    "runs_in_range": "updraft.scheduling.decisions.marking",
    "task_marks": "updraft.scheduling.decisions.marking",
    "will_retry": "updraft.scheduling.decisions.retries",
    "branch_skips": "updraft.scheduling.decisions.skips",
    "group_task_ids": "updraft.scheduling.decisions.skips",
    "short_circuit_skips": "updraft.scheduling.decisions.skips",
    "task_groups": "updraft.scheduling.decisions.skips",
}

__all__ = [
    "BlockedReason", "RunEvaluation", "Selection", "TIChange", "branch_skips", "evaluate_run", "evaluate_tasks",
    "group_task_ids", "marked_selection", "relatives", "resets", "run_mark", "runs_in_range", "short_circuit_skips",
    "task_groups", "task_marks", "to_clear", "will_retry", "with_relatives",
]

__getattr__ = lazy_names(__name__, _HOMES)
