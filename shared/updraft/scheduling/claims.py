"""The claim protocol: how a scheduled task instance becomes a dispatched try without row locks.

Every limit the try counts against (pool slots, its run's max_active_tasks, the task's max_active_tis_per_dag,
global parallelism) is one store item; taking a slot is a single-item conditional write that names the holder,
so it is idempotent and never over-admits. Only when every limit is taken does the instance move
``scheduled -> queued`` (conditional on its state), and only the scheduler that wins that write dispatches. Any
failure releases what was taken; a crash between the writes leaves a holder whose task instance does not hold it,
which ``reconcile.reconcile_limits`` returns after a grace period.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import time
import uuid
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from updraft.executors.base import Dispatch
from updraft.executors.choice import executor_for
from updraft.model.limits import (
    DEFAULT_POOL,
    DEFAULT_POOL_SLOTS,
    PARALLELISM_LIMIT,
    pool_limit,
    pool_of,
    run_tasks_limit,
    task_limit,
    task_run_limit,
)
from updraft.model.records import DagRun, TaskInstance
from updraft.model.states import FINISHED_TI_STATES, TaskInstanceState
from updraft.scheduling import blocked
from updraft.scheduling.blocked import BlockedReason
from updraft.scheduling.clearing import as_recorded
from updraft.scheduling.concurrent_writes import concurrently
from updraft.scheduling.deferrals import is_resuming
from updraft.scheduling.slot_donor import Handed, SlotDonor
from updraft.serialization.model import SerializedDAG, SerializedTask
from updraft.store.api import Store
from updraft.store.limit_api import Taken

# How long a claim that finds its own try already holding a limit (``Taken.HELD``: another scheduler is claiming
# the same try) waits for that claimer's outcome before it reads the instance again: a claim's remaining writes
# are a round trip or two. Queued by then: a race lost, the pass goes on elsewhere. Still scheduled: the other
# claimer was refused (or is slower than this), so the try is refused as by a full limit, as without the wait.
HELD_WAITS_S = (0.01, 0.02, 0.04, 0.08)


@dataclass(frozen=True)
class LimitNeed:
    limit_id: str
    slots: int
    limit: int
    refusal: BlockedReason  # what a claim refused by this limit reports


@dataclass
class ClaimResult:
    dispatch: Dispatch | None = None
    refused: BlockedReason | None = None  # a limit had no room
    lost: bool = False  # claimed (or created) by another scheduler meanwhile
    stale: bool = False  # lost a new instance another created meanwhile, claimed or not: the pass's read is old
    full: LimitNeed | None = None  # the limit that had no room, so a pass can stop asking it

    @property
    def claimed(self) -> bool:
        return self.dispatch is not None


def limits_for(ti: TaskInstance, task: SerializedTask, dag: SerializedDAG, *, parallelism: int,
               pool_slots_total: int) -> list[LimitNeed]:
    """The limits one try counts against, in a fixed order (pool first: it is the one most often full)."""
    needs = [
        LimitNeed(pool_limit(ti.pool), ti.pool_slots, pool_slots_total, blocked.pool_full(ti.pool, ti.pool_slots)),
        LimitNeed(run_tasks_limit(ti.dag_id, ti.run_id), 1, dag.max_active_tasks,
                  blocked.max_active_tasks(dag.max_active_tasks)),
    ]
    per_task = getattr(task, "max_active_tis_per_dag", None)
    if per_task:
        needs.append(LimitNeed(task_limit(ti.dag_id, ti.task_id), 1, per_task,
                               blocked.max_active_tis_per_dag(per_task)))
    per_run = getattr(task, "max_active_tis_per_dagrun", None)
    if per_run:
        needs.append(LimitNeed(task_run_limit(ti.dag_id, ti.run_id, ti.task_id), 1, per_run,
                               blocked.max_active_tis_per_dagrun(per_run)))
    needs.append(LimitNeed(PARALLELISM_LIMIT, 1, parallelism, blocked.parallelism(parallelism)))
    return needs


def claim_needs(ti: TaskInstance, task: SerializedTask, dag: SerializedDAG, *, parallelism: int,
                pool_sizes: dict[str, int | None]) -> list[LimitNeed] | BlockedReason:
    """The limits a claim must take, or why it cannot be claimed at all (no such pool, pool too small)."""
    size = pool_sizes.get(ti.pool)
    if size is None:
        if ti.pool != DEFAULT_POOL:
            return blocked.pool_missing(ti.pool)
        size = DEFAULT_POOL_SLOTS
    if 0 <= size < ti.pool_slots:
        return blocked.pool_too_small(ti.pool, size, ti.pool_slots)
    needs = limits_for(ti, task, dag, parallelism=parallelism, pool_slots_total=size)
    if is_resuming(ti):  # what it kept while deferred (its pool slot, include_deferred) it holds already
        needs = [need for need in needs if need.limit_id not in ti.held_limits]
    return needs


def claim(store: Store, ti: TaskInstance, task: SerializedTask, needs: list[LimitNeed], *, now: dt.datetime,
          create_fields: dict[str, Any] | None = None, donor: SlotDonor | None = None,
          run: DagRun | None = None, contended: bool = False, new_limits: Collection[str] = (),
          reserved: Callable[[str, str], tuple[bool, int | None]] | None = None) -> ClaimResult:
    """Try to turn one scheduled instance into a dispatched try; never over-admits, never dispatches twice.

    With ``create_fields`` the instance does not exist yet (the evaluation that scheduled it did not write it):
    the claim creates it as queued, on the condition that nobody created it meanwhile. With ``donor`` (a worker's
    mini scheduler) the slots of the try that just ended are handed on to this try where offered, instead of a
    take (``slot_donor``); a failed claim gives them back to the donor. ``run``: the run as the caller read it,
    carried by the dispatch (``executors.dispatch_run``). ``contended``: other schedulers are claiming the same
    instances (the pass lost a race), so the first limit is taken alone: of two claims of one try, the one
    refused there (``Taken.HELD``) has taken nothing else to give back, and the two can never each hold a limit
    the other needs and both be refused. ``new_limits``: limits the caller expects not to exist yet (the run's
    own, in the pass that started it), created by their take in one write (``Store.take_slots``' ``new``).
    ``reserved``: the slots the pass took ahead for this try (``slot_reservations``), asked by (limit id, holder)
    before a take: (whether one was taken, its shard).
    """
    # A try resuming after a deferral keeps its number (Airflow counts the two halves as one try) and the slots
    # it kept while deferred (a pool with include_deferred): only the others are taken again.
    # (``claim_needs`` left the kept ones out of ``needs``.)
    # A reschedule-mode sensor's next poke keeps it too (``continues_try``).
    resuming = is_resuming(ti)
    continues = continues_try(ti)
    try_number = claim_try_number(ti)
    holder = ti.key.holder(try_number)
    kept = list(ti.held_limits) if resuming else []

    placed: dict[str, int] = {}  # where takes of sharded limits put the holder (its release writes there)
    handed: dict[str, Handed] = {}  # the slots the donor handed on to this try, by limit

    def take(need: LimitNeed) -> Taken:
        slot = donor.hand_on(need.limit_id, need.slots) if donor is not None else None
        if slot is not None:
            handed[need.limit_id] = slot
            return Taken.YES
        if reserved is not None:
            found, shard = reserved(need.limit_id, holder)
            if found:
                if shard is not None:
                    placed[need.limit_id] = shard
                return Taken.YES
        return store.take_slots(need.limit_id, holder, need.slots, limit=need.limit, now=now, placed=placed,
                                new=need.limit_id in new_limits)

    def give_back(limit_ids: list[str]) -> None:
        _release(store, [limit_id for limit_id in limit_ids if limit_id not in handed], holder, placed)
        for limit_id, slot in handed.items():
            if donor is not None:
                donor.take_back(limit_id, slot)

    # A named pool (small, the limit most often full) alone first, so a full pool costs one write; the default
    # pool (128 slots) with the rest, at once: one round trip for the whole claim.
    first: list[LimitNeed] = []
    if needs and (contended or named_pool_first(needs)):
        first = needs[:1]
        first_taken = take(first[0])
        if first_taken is not Taken.YES:  # nothing taken before it (nor handed on: a refusal is a take's)
            return _refused(store, ti, first[0], first_taken, new=create_fields is not None)
    rest = needs[len(first):]
    results = concurrently([functools.partial(take, need) for need in rest])
    landed = [need.limit_id for need, ok in zip(rest, results, strict=True) if ok is Taken.YES]
    taken = [need.limit_id for need in first] + landed
    held = kept + taken
    refused = [(need, ok) for need, ok in zip(rest, results, strict=True) if ok is not Taken.YES]
    if refused:
        give_back(taken)
        full = next((need for need, ok in refused if ok is not Taken.HELD), None)
        if full is not None:  # a limit with no room refuses whoever else claims the try
            return ClaimResult(refused=full.refusal, full=full)
        if not first:
            # Another scheduler claims this try at this moment, and each of the two may hold a limit the other
            # needs (both refused): once more with the first limit alone, which one of them wins.
            return claim(store, ti, task, needs, now=now, create_fields=create_fields, donor=donor, run=run,
                         contended=True, new_limits=new_limits, reserved=reserved)
        return _refused(store, ti, refused[0][0], Taken.HELD, new=create_fields is not None)
    try_id = uuid.uuid4().hex
    shards = ({limit_id: shard for limit_id, shard in ti.limit_shards.items() if limit_id in kept} | placed
              | {limit_id: slot.shard for limit_id, slot in handed.items() if slot.shard is not None})
    entries = ({limit_id: entry for limit_id, entry in ti.limit_entries.items() if limit_id in kept}
               | {limit_id: slot.entry for limit_id, slot in handed.items()})
    fields = {"try_number": try_number, "try_id": try_id, "queued_at": now, "held_limits": held,
              "limit_shards": shards or None, "limit_entries": entries or None,
              "start_date": None, "end_date": None, "lease_expires_at": None, "note": None, "blocked_reason": None}
    if not continues:  # a new try starts without the previous try's reschedules, as Airflow's new ti.id
        fields.update(reschedule_count=0, first_reschedule_date=None, rescheduled_try_id=None)
    if create_fields is not None:
        fields = {**create_fields, **fields}
    expected = None if create_fields is not None else TaskInstanceState.SCHEDULED
    won = store.queue_ti(ti.key, expected=expected, fields=fields)
    if not won:
        give_back(taken)
        return ClaimResult(lost=True, stale=create_fields is not None)
    if ti.try_number > 0 and not resuming and not continues:
        # A retry supersedes the try that failed: it is kept as the instance's history (the tries routes list
        # it). Written once per try number, so a clear that recorded it first keeps its record.
        store.record_try(as_recorded(ti))
    compute = dict(getattr(task, "compute", None) or {})
    # The run copied: the caller goes on with its own object, the dispatch may be delivered in this process.
    return ClaimResult(Dispatch(ti.key, try_number, try_id, executor=executor_for(compute, ti.executor),
                                compute=compute, run=dataclasses.replace(run) if run is not None else None))


def _refused(store: Store, ti: TaskInstance, need: LimitNeed, taken: Taken, *, new: bool) -> ClaimResult:
    """A claim a limit refused (what it took given back already). Refused because the same try holds the limit
    (another scheduler claiming it at this moment): that claimer's outcome decides, so it is waited for (briefly)
    rather than taken as "limit full", which would make the pass stop asking the limit for every later try."""
    if taken is Taken.HELD:
        for pause in HELD_WAITS_S:
            time.sleep(pause)
            current = store.get_ti(ti.key)
            if new and current is not None and current.state == TaskInstanceState.SCHEDULED:
                return ClaimResult(lost=True, stale=True)  # created unclaimed by another: the pass's read is old
            if _claimed(ti, current, new=new):
                return ClaimResult(lost=True)
    return ClaimResult(refused=need.refusal, full=need)


def claimed_meanwhile(store: Store, ti: TaskInstance, *, new: bool) -> bool:
    """Whether another scheduler has claimed ``ti`` (or, ``new``: created it) since it was read as scheduled."""
    return _claimed(ti, store.get_ti(ti.key), new=new)


def _claimed(ti: TaskInstance, current: TaskInstance | None, *, new: bool) -> bool:
    if new:
        return current is not None
    return current is None or current.state != TaskInstanceState.SCHEDULED or current.try_number != ti.try_number


def named_pool_first(needs: list[LimitNeed]) -> bool:
    """Whether a claim takes its first limit alone: a named pool, small and the limit most often full, so a full
    pool costs one write and nothing to give back."""
    return bool(needs) and needs[0].limit_id != pool_limit(DEFAULT_POOL) and pool_of(needs[0].limit_id) is not None


def claim_try_number(ti: TaskInstance) -> int:
    """The try number a claim of ``ti`` starts (its holder's): the next one, but for a try resuming after a
    deferral or a reschedule-mode sensor's next poke, which go on with theirs."""
    return ti.try_number if is_resuming(ti) or continues_try(ti) else ti.try_number + 1


def continues_try(ti: TaskInstance) -> bool:
    """Whether claiming ``ti`` is the next poke of a reschedule-mode sensor: the same try goes on (Airflow keeps
    try_number across reschedules). It holds while the poke that asked for it is still the instance's last try:
    a zombie's retry, a mark or a clear leave another try_id or none (a poke claimed but stuck in the queue is put
    back with that poke's id, ``backstops``)."""
    return ti.rescheduled_try_id is not None and ti.rescheduled_try_id == ti.try_id


def _release(store: Store, limit_ids: list[str], holder: str, shards: dict[str, int] | None = None) -> None:
    concurrently([functools.partial(store.release_slots, limit_id, holder, shard=(shards or {}).get(limit_id))
                  for limit_id in limit_ids])


def release_try_limits(store: Store, ti: TaskInstance, *, given: set[str] | frozenset[str] = frozenset(),
                       ended: bool = False) -> None:
    """Give back the slots a try held (after it left queued/running), each under the entry it holds it by
    (``TaskInstance.entry``), but those ``given`` to another try (``slot_donor``). Safe to repeat.

    ``ended``: ``ti`` is the try as its worker ended it, and when that state ends the try for good
    (``ends_try_for_good``) its holders take no more, so each release is final (``Store.release_slots``: one
    write, the marker left to expire)."""
    final = ended and ends_try_for_good(ti)
    concurrently([functools.partial(store.release_slots, limit_id, ti.entry(limit_id),
                                    shard=ti.limit_shards.get(limit_id), final=final)
                  for limit_id in ti.held_limits if limit_id not in given])


def ends_try_for_good(ti: TaskInstance) -> bool:
    """Whether ``ti``'s state ends its try so that no take under its holder ids can follow: finished, or up for
    retry (the retry is the next try number). Not deferred nor up for reschedule: the resumed half and the next
    poke keep the try number, so they take under the same holder."""
    return ti.state in FINISHED_TI_STATES or ti.state == TaskInstanceState.UP_FOR_RETRY
