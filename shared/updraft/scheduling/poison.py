"""Poison-pill containment: a run or a DAG the scheduler cannot load or decide is set aside, not fatal.

A run whose DAG version cannot be loaded (a corrupt item, a version deleted by hand, a serializer bug) would
otherwise raise out of ``Scheduler.run_pass`` on every tick, so no run of any DAG would progress. The pass skips it
and says so three ways: the pass report's ``poisoned`` (the scheduler Lambda logs it and
publishes the ``PoisonPills`` metric, which the stack alarms on), and the run's note, so the API, the UI and
``updraft tasks why`` show the reason where a user looks. The note is written once per distinct error and never
over a user's own note.
"""

from __future__ import annotations

import logging

from updraft.model.records import DagRun
from updraft.scheduling.decisions.blocked import BlockedReason, BlockKind
from updraft.store.api import Store

logger = logging.getLogger(__name__)

NOTE_PREFIX = "Updraft cannot schedule this run: "
DEP_NAME = "Scheduler"  # the dependency ``tasks why`` names beside the reason


def describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:1000]


def record_poisoned_run(store: Store, run: DagRun, exc: Exception) -> str:
    """Keep why ``run`` was skipped on its note (unless a user wrote one); returns the description."""
    message = describe(exc)
    logger.error("skipping run %s/%s: %s", run.dag_id, run.run_id, message, exc_info=exc)
    note = NOTE_PREFIX + message
    if run.note != note and (run.note is None or run.note.startswith(NOTE_PREFIX)):
        try:
            store.set_run_note(run.dag_id, run.run_id, note)
        except Exception:  # the record is best effort: the skip itself must not fail the pass
            logger.exception("could not record why run %s/%s was skipped", run.dag_id, run.run_id)
    return message


def clear_poisoned_note(store: Store, run: DagRun) -> None:
    """The run is decided again (its cause was fixed): the scheduler's note about it no longer holds."""
    if run.note is not None and run.note.startswith(NOTE_PREFIX):
        store.set_run_note(run.dag_id, run.run_id, None)
        run.note = None


def poisoned_reason(run: DagRun) -> BlockedReason | None:
    """Why every task of ``run`` waits, when the scheduler set the run aside (for ``tasks why``)."""
    if run.note is None or not run.note.startswith(NOTE_PREFIX):
        return None
    return BlockedReason(BlockKind.DEP, run.note, DEP_NAME)
