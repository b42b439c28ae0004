"""Reconciliation: the slots a crashed invocation left taken go back, on a tick, not on the hot path.

A claim takes limit slots before it moves its instance to queued, and a run takes a slot of its DAG's run limit
before it starts; an invocation that dies between the writes leaves a holder nobody will release. Both sweeps
here return such holders once they are older than ``CLAIM_GRACE`` (younger ones may belong to a claim still in
progress). A holder names its try (``TIKey.holder``/``parse_holder``; a slot handed on keeps the id of the try it
was first taken for, and ``slot_holders`` finds the try holding it now) or its run, which is how the sweep checks it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping

from updraft.limits import ensure, resize
from updraft.model.limits import (
    PARALLELISM_LIMIT,
    dag_runs_limit,
    pool_limit,
    run_tasks_limit,
    task_limit,
    task_run_limit,
)
from updraft.model.records import DagRun, TIKey
from updraft.model.states import FINISHED_RUN_STATES, DagRunState
from updraft.scheduling.holding import limits_table
from updraft.scheduling.slot_holders import EntryHolders
from updraft.serialization.model import SerializedDAG
from updraft.store.api import Store
from updraft.store.limit_api import LimitState

# A holder younger than this may belong to a claim still in progress; only older ones are reconciled.
CLAIM_GRACE = dt.timedelta(seconds=60)


def reconcile(store: Store, runs: list[DagRun], dag: Callable[[str, str], SerializedDAG], *, now: dt.datetime,
              parallelism: int) -> None:
    """Return slots a crashed invocation left taken in the limits ``runs`` (the active runs) count against."""
    read = {PARALLELISM_LIMIT: follow_parallelism(store, parallelism)}
    limit_ids = [pool_limit(name) for name in store.pool_names()] + [PARALLELISM_LIMIT]
    for dag_id in sorted({r.dag_id for r in runs}):
        if not created_within_grace(store, dag_runs_limit(dag_id), now):
            reconcile_run_slots(store, dag_id, now=now)
    for run in runs:
        version = dag(run.dag_id, run.dag_hash)
        limit_ids += [task_limit(run.dag_id, t.task_id) for t in version.tasks if t.max_active_tis_per_dag]
        if run.state == DagRunState.QUEUED:
            continue  # nothing claimed since it was (re)queued: its own limits count again, and are swept, once it runs
        limit_ids.append(run_tasks_limit(run.dag_id, run.run_id))
        limit_ids += [task_run_limit(run.dag_id, run.run_id, t.task_id) for t in version.tasks
                      if t.max_active_tis_per_dagrun]
    reconcile_limits(store, sorted(i for i in set(limit_ids) if not created_within_grace(store, i, now)), now=now,
                     read=read)


def created_within_grace(store: Store, limit_id: str, now: dt.datetime) -> bool:
    """Whether this process created the limit less than ``CLAIM_GRACE`` ago (a run's own limits, in the pass that
    started it): every holder came later, so none is old enough to reconcile, and reading it would find nothing
    to do. (Skipping a read only delays a leak's return, to the next sweep after the grace.)"""
    created = store.created_at(limit_id)
    return created is not None and now - created < CLAIM_GRACE


def follow_parallelism(store: Store, parallelism: int) -> LimitState | None:
    """Size the parallelism limit's counters (``updraft.limits``) to the configured value: a claim only sets it
    when it creates them, so a redeploy (or a local restart with other --workers) that changes parallelism would
    otherwise keep the old one. One read when they have that size already; created when absent. Returns the
    limit item of tries claimed before tickets (its entries, which reconciliation goes on from)."""
    table = limits_table(store)
    if not resize(table, PARALLELISM_LIMIT, parallelism):
        ensure(table, PARALLELISM_LIMIT, parallelism)
    return store.get_limit(PARALLELISM_LIMIT)


def reconcile_run_slots(store: Store, dag_id: str, *, now: dt.datetime) -> None:
    """Release max_active_runs slots held by runs that finished or no longer exist."""
    state = store.get_limit(dag_runs_limit(dag_id))
    for run_id, taken_at in (state.taken_at if state else {}).items():
        if now - taken_at < CLAIM_GRACE:
            continue
        run = store.get_run(dag_id, run_id)
        if run is None or run.state in FINISHED_RUN_STATES:
            store.release_slots(dag_runs_limit(dag_id), run_id)


def reconcile_limits(store: Store, limit_ids: list[str], *, now: dt.datetime, grace: dt.timedelta = CLAIM_GRACE,
                     read: Mapping[str, LimitState | None] | None = None) -> int:
    """Release entries no try holds (a crash mid-claim, mid-release or mid-hand-over).

    An entry is legitimate while a try holding it (the one it names or, handed on, a later one: ``slot_holders``)
    is queued or running (or deferred, or scheduled to resume, holding a pool slot it kept), or while a try that
    held it ended less than ``grace`` ago (it may be handing it on); anything else older than ``grace`` is a leak.
    Returns how many entries were released. ``read``: limits this pass read already.
    """
    released = 0
    holders = EntryHolders(store)
    for limit_id in limit_ids:
        state = (read or {})[limit_id] if limit_id in (read or {}) else store.get_limit(limit_id)
        if state is None:
            continue
        for entry in list(state.holders):
            taken_at = state.taken_at.get(entry)
            if taken_at is not None and now - taken_at < grace:
                continue
            if TIKey.parse_holder(entry) is None:
                continue
            if not holders.in_use(limit_id, entry, now=now, grace=grace) and store.release_slots(limit_id, entry):
                released += 1
    return released
