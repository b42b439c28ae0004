"""The claim protocol: how a scheduled task instance becomes a dispatched try without row locks.

Every limit the try counts against (pool slots, its run's max_active_tasks, the task's max_active_tis_per_dag,
global parallelism) is one store item; taking a slot is a single-item conditional write that names the holder,
so it is idempotent and never over-admits. Only when every limit is taken does the instance move
``scheduled -> queued`` (conditional on its state), and only the scheduler that wins that write dispatches. Any
failure releases what was taken; a crash between the writes leaves a holder whose task instance does not hold it,
which ``reconcile_limits`` returns after a grace period.
"""

from __future__ import annotations

import concurrent.futures
import datetime as dt
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from updraft.executors.base import Dispatch
from updraft.model.limits import (
    DEFAULT_POOL,
    DEFAULT_POOL_SLOTS,
    PARALLELISM_LIMIT,
    pool_limit,
    run_tasks_limit,
    task_limit,
    task_run_limit,
)
from updraft.model.records import TaskInstance, TIKey
from updraft.model.states import SLOT_HOLDING_STATES, TaskInstanceState
from updraft.store.api import Store

# A holder younger than this may belong to a claim still in progress; only older ones are reconciled.
CLAIM_GRACE = dt.timedelta(seconds=60)


T = TypeVar("T")
_writers: concurrent.futures.ThreadPoolExecutor | None = None
_writers_lock = threading.Lock()


def concurrently(calls: list[Callable[[], T]]) -> list[T]:
    """Run independent single-item writes at once and return their results in order.

    Each limit is its own item and each write its own condition, so their order never mattered; sending them
    together makes a claim or a release cost one round trip instead of one per limit, which is most of the
    time between one task's end and the next one's start. The first exception is raised after all finished.
    """
    global _writers
    if len(calls) <= 1:
        return [call() for call in calls]
    with _writers_lock:
        if _writers is None:
            _writers = concurrent.futures.ThreadPoolExecutor(8, thread_name_prefix="updraft-writes")
    futures = [_writers.submit(call) for call in calls]
    concurrent.futures.wait(futures)
    return [future.result() for future in futures]


@dataclass(frozen=True)
class LimitNeed:
    limit_id: str
    slots: int
    limit: int


@dataclass
class ClaimResult:
    dispatch: Dispatch | None = None
    reason: str | None = None  # why not claimed: a full limit, a missing pool, or a lost race
    full: LimitNeed | None = None  # the limit that had no room, so a pass can stop asking it

    @property
    def claimed(self) -> bool:
        return self.dispatch is not None


def limits_for(ti: TaskInstance, task: Any, dag: Any, *, parallelism: int, pool_slots_total: int) -> list[LimitNeed]:
    """The limits one try counts against, in a fixed order (pool first: it is the one most often full)."""
    needs = [
        LimitNeed(pool_limit(ti.pool), ti.pool_slots, pool_slots_total),
        LimitNeed(run_tasks_limit(ti.dag_id, ti.run_id), 1, dag.max_active_tasks),
    ]
    per_task = getattr(task, "max_active_tis_per_dag", None)
    if per_task:
        needs.append(LimitNeed(task_limit(ti.dag_id, ti.task_id), 1, per_task))
    per_run = getattr(task, "max_active_tis_per_dagrun", None)
    if per_run:
        needs.append(LimitNeed(task_run_limit(ti.dag_id, ti.run_id, ti.task_id), 1, per_run))
    needs.append(LimitNeed(PARALLELISM_LIMIT, 1, parallelism))
    return needs


def claim_needs(ti: TaskInstance, task: Any, dag: Any, *, parallelism: int,
                pool_sizes: dict[str, int | None]) -> list[LimitNeed] | str:
    """The limits a claim must take, or why it cannot be claimed at all (no such pool, pool too small)."""
    size = pool_sizes.get(ti.pool)
    if size is None:
        if ti.pool != DEFAULT_POOL:
            return f"pool '{ti.pool}' does not exist"
        size = DEFAULT_POOL_SLOTS
    if 0 <= size < ti.pool_slots:
        return f"task needs {ti.pool_slots} slots but pool '{ti.pool}' has {size}"
    return limits_for(ti, task, dag, parallelism=parallelism, pool_slots_total=size)


CLAIMED_ELSEWHERE = "claimed by another scheduler"


def claim(store: Store, ti: TaskInstance, task: Any, needs: list[LimitNeed], *, now: dt.datetime,
          create_fields: dict[str, Any] | None = None) -> ClaimResult:
    """Try to turn one scheduled instance into a dispatched try; never over-admits, never dispatches twice.

    With ``create_fields`` the instance does not exist yet (the evaluation that scheduled it did not write it):
    the claim creates it as queued, on the condition that nobody created it meanwhile.
    """
    try_number = ti.try_number + 1
    holder = ti.key.holder(try_number)

    def take(need: LimitNeed) -> bool:
        return store.take_slots(need.limit_id, holder, need.slots, limit=need.limit, now=now)

    # A named pool (small, the limit most often full) alone first, so a full pool costs one write; the default
    # pool (128 slots) with the rest, at once: one round trip for the whole claim.
    first: list[LimitNeed] = []
    if needs[0].limit_id != pool_limit(DEFAULT_POOL):
        first = needs[:1]
        if not take(first[0]):
            return ClaimResult(reason=f"no free slot in {first[0].limit_id}", full=first[0])
    rest = needs[len(first):]
    results = concurrently([lambda need=need: take(need) for need in rest])
    taken = [need.limit_id for need in first] + [need.limit_id for need, ok in zip(rest, results, strict=True) if ok]
    refused = [need for need, ok in zip(rest, results, strict=True) if not ok]
    if refused:
        _release(store, taken, holder)
        return ClaimResult(reason=f"no free slot in {refused[0].limit_id}", full=refused[0])
    try_id = uuid.uuid4().hex
    fields = {"try_number": try_number, "try_id": try_id, "queued_at": now, "held_limits": taken,
              "start_date": None, "end_date": None, "lease_expires_at": None, "note": None}
    if create_fields is not None:
        fields = {**create_fields, **fields}
    expected = None if create_fields is not None else TaskInstanceState.SCHEDULED
    won = store.transition_ti(ti.key, expected=[expected], state=TaskInstanceState.QUEUED, fields=fields)
    if not won:
        _release(store, taken, holder)
        return ClaimResult(reason=CLAIMED_ELSEWHERE)
    compute = dict(getattr(task, "compute", None) or {})
    return ClaimResult(Dispatch(ti.key, try_number, try_id, executor=compute.get("executor") or ti.executor,
                                compute=compute))


def _release(store: Store, limit_ids: list[str], holder: str) -> None:
    concurrently([lambda limit_id=limit_id: store.release_slots(limit_id, holder) for limit_id in limit_ids])


def release_try_limits(store: Store, ti: TaskInstance) -> None:
    """Give back the slots a try held (after it left queued/running). Safe to repeat."""
    _release(store, list(ti.held_limits), ti.key.holder(ti.try_number))


def reconcile_limits(store: Store, limit_ids: list[str], *, now: dt.datetime, grace: dt.timedelta = CLAIM_GRACE) -> int:
    """Release holders whose task instance does not hold them (a crash mid-claim or mid-release).

    A holder is legitimate while its try is queued or running and lists the limit; anything else older than
    ``grace`` is a leak. Returns how many slots holders were released.
    """
    released = 0
    for limit_id in limit_ids:
        state = store.get_limit(limit_id)
        if state is None:
            continue
        for holder, _slots in list(state.holders.items()):
            taken_at = state.taken_at.get(holder)
            if taken_at is not None and now - taken_at < grace:
                continue
            parsed = TIKey.parse_holder(holder)
            if parsed is None:
                continue
            key, try_number = parsed
            ti = store.get_ti(key)
            legit = (ti is not None and ti.state in SLOT_HOLDING_STATES and ti.try_number == try_number
                     and limit_id in ti.held_limits)
            if not legit and store.release_slots(limit_id, holder):
                released += 1
    return released
