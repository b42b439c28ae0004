"""The claim protocol: how a scheduled task instance becomes a dispatched try without row locks.

Every limit the try counts against (pool slots, its run's max_active_tasks, the task's max_active_tis_per_dag
and max_active_tis_per_dagrun, global parallelism) is a ``updraft.limits`` limit. A claim is one transaction:
the instance's ``scheduled -> queued`` write, conditional on its state and try, carrying its ticket, and a take
of every limit (``limits.acquire``). It lands whole (the try is dispatched) or changes nothing: refused by a
full limit, or lost to another scheduler that claimed the try first.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from updraft.executors.base import Dispatch
from updraft.executors.choice import executor_for
from updraft.limits import (
    Acquired,
    Claim,
    Contended,
    Frees,
    Full,
    Handed,
    HolderWrite,
    Lost,
    Need,
    NotHeld,
    Ticket,
    acquire,
    fits,
    hand_over,
)
from updraft.model.limits import (
    DEFAULT_POOL,
    DEFAULT_POOL_SLOTS,
    PARALLELISM_LIMIT,
    pool_limit,
    run_tasks_limit,
    task_limit,
    task_run_limit,
)
from updraft.model.records import DagRun, TaskInstance
from updraft.model.states import TaskInstanceState
from updraft.scheduling.decisions import blocked
from updraft.scheduling.decisions.blocked import BlockedReason
from updraft.scheduling.decisions.clearing import as_recorded
from updraft.scheduling.deferrals import is_resuming
from updraft.scheduling.holding import acquire_sized, held_limit_ids, limits_table, release_ticket, ticket_of
from updraft.serialization.model import SerializedDAG, SerializedTask
from updraft.store.api import Store
from updraft.store.writes import TransactWrite


@dataclass(frozen=True)
class LimitNeed:
    limit_id: str
    slots: int
    limit: int
    refusal: BlockedReason  # what a claim refused by this limit reports


@dataclass
class ClaimResult:
    dispatch: Dispatch | None = None
    refused: BlockedReason | None = None  # a limit had no room (``full``), or its counters were contended
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


def needs_as_held(ti: TaskInstance, task: SerializedTask, dag: SerializedDAG, ticket: Ticket) -> bool:
    """Whether a claim of ``ti`` would need exactly what ``ticket`` holds (the limits and their slots, whatever
    their sizes: ``limits.fits``), so a try's end holding it can hand its slots over (``Handing``)."""
    needs = limits_for(ti, task, dag, parallelism=0, pool_slots_total=0)
    return not is_resuming(ti) and ticket.holds_exactly((need.limit_id, need.slots) for need in needs)


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
        kept = held_limit_ids(ti)
        needs = [need for need in needs if need.limit_id not in kept]
    return needs


@dataclass(frozen=True)
class Candidate:
    """One try a pass means to claim: the instance as read, its task, its needs, and ``create_fields`` when the
    instance does not exist yet (the claim creates it queued)."""

    ti: TaskInstance
    task: SerializedTask
    needs: list[LimitNeed]
    create_fields: dict[str, Any] | None = None


# Tries of one run claimed in one transaction at most (each limit taken once for all of them: ``free >= k``),
# so a transaction of 25 instances and a few limits stays well under DynamoDB's 100 items.
BATCH = 25


@dataclass
class Handing:
    """A try's end not sent yet, whose slots go to the next claim that needs exactly what it holds
    (``waiting_claims.HandOver``): the end's write (``holder``) and the ticket it gives. ``landed``: None until
    the end is sent with a claim; then whether it landed (False: the try was ended elsewhere). ``lost``: the
    last claim it was sent with had been claimed by another meanwhile (nothing landed)."""

    holder: HolderWrite
    ticket: Ticket
    landed: bool | None = None
    lost: bool = False


def claim_batch(store: Store, candidates: list[Candidate], *, now: dt.datetime,
                run: DagRun | None = None, known: Frees | None = None,
                handing: Handing | None = None, crowded: bool = False) -> list[ClaimResult]:
    """Claim tries of one run together (up to ``BATCH``), in one transaction: all dispatched; or, a limit short
    of their slots, each claimed on its own (in order); or, some claimed by another scheduler meanwhile, those
    lost and the rest claimed together again; or, another scheduler having created some of them, none (those
    lost and stale, the others untouched). None may be resuming with a kept ticket but a lone one.

    Never over-admits, never dispatches twice: each instance's ``scheduled -> queued`` write and a take of every
    limit its needs name are one transaction (``updraft.limits.acquire``). A candidate with ``create_fields``
    does not exist yet (the evaluation that scheduled it did not write it): its claim creates it queued, on the
    condition that nobody created it meanwhile. ``run``: the run as the caller read it, carried by the dispatch
    (``executors.dispatch_run``). ``known``: where the caller saw room in the limits' shards (``limits.Frees``),
    kept up to date. ``handing``: a lone stored candidate that needs what it holds is claimed with that end
    instead, taking its slots (``limits.hand_over``). ``crowded``: other instances of the run will wait for these
    tries' slots (``Dispatch.waited``)."""
    if len(candidates) > BATCH or (len(candidates) > 1 and any(is_resuming(c.ti) for c in candidates)):
        raise ValueError(f"claim_batch: {len(candidates)} candidates, or a resumed try among several")
    parts = [_ClaimParts.of(store, candidate, now, crowded) for candidate in candidates]
    if (handing is not None and handing.landed is None and len(parts) == 1
            and candidates[0].create_fields is None and fits(parts[0].claim, handing.ticket)):
        handed = _handed(store, handing, candidates[0], parts[0], run)
        if handed is not None:
            return [handed]
    try:
        if len(parts) == 1:
            outcome = _acquire(store, parts[0].claim,
                               queue=lambda: store.queue_ti(candidates[0].ti.key, expected=parts[0].expected,
                                                            fields=parts[0].fields), known=known)
        else:
            outcome = acquire(limits_table(store), [part.claim for part in parts], known)
    except Contended:
        # Other claims and releases held these limits' counters on every attempt: nothing was written. Refused
        # as waiting (no limit is known full), so the pass creates them scheduled and marks the run: the next
        # end there claims them (``waiting_claims``). As a lost race nobody would before the tick: they may not
        # even exist yet (a claim creates its instance). Not read again at once: that adds to the contention.
        return [ClaimResult(refused=blocked.contended()) for _ in candidates]
    if len(parts) > 1:
        if isinstance(outcome, Lost) and any(candidates[i].create_fields is not None for i in outcome.claims):
            # Another scheduler created some of them: the pass's read is old, and no more is written from it.
            return [ClaimResult(lost=True, stale=True) if i in outcome.claims else ClaimResult()
                    for i in range(len(candidates))]
        if isinstance(outcome, Lost):
            return _without_lost(store, candidates, outcome.claims, now=now, run=run, known=known, crowded=crowded)
        if isinstance(outcome, Full):  # a limit short of the batch's slots: each as far as it goes
            return _one_by_one(store, candidates, now=now, run=run, known=known)
    if isinstance(outcome, Full):
        full = next(need for need in candidates[0].needs if need.limit_id == outcome.limit_id)
        return [ClaimResult(refused=full.refusal, full=full)]
    if isinstance(outcome, Lost):
        # Claimed by another meanwhile; or, for a new instance, created by another: the pass's read is old.
        return [ClaimResult(lost=True, stale=candidates[0].create_fields is not None)]
    return [part.dispatched(store, candidate, run) for part, candidate in zip(parts, candidates, strict=True)]


def _handed(store: Store, handing: Handing, candidate: Candidate, part: _ClaimParts,
            run: DagRun | None) -> ClaimResult | None:
    """``candidate`` claimed with ``handing``'s end, taking its slots; None: that end was refused (its try was
    ended elsewhere, its slots given back), so the candidate is claimed as any other."""
    try:
        outcome = hand_over(limits_table(store), handing.holder, handing.ticket, part.claim)
    except Contended:
        return ClaimResult(refused=blocked.contended())  # nothing written: the end goes with its release
    if isinstance(outcome, Handed):
        handing.landed = True
        return part.dispatched(store, candidate, run)
    if isinstance(outcome, NotHeld):
        handing.landed = False
        return None
    handing.lost = True  # claimed by another meanwhile: nothing landed
    return ClaimResult(lost=True)


def _without_lost(store: Store, candidates: list[Candidate], lost: tuple[int, ...], *, now: dt.datetime,
                  run: DagRun | None, known: Frees | None, crowded: bool) -> list[ClaimResult]:
    """A batch whose transaction named tries another scheduler claimed meanwhile (``lost``, nothing written): those
    are lost, the others claimed again together (``Lost`` says they may be), so schedulers that meet spend a
    transaction per round, not one per try. Each round drops at least one try, so it ends."""
    rest = [c for i, c in enumerate(candidates) if i not in lost]
    results = iter(claim_batch(store, rest, now=now, run=run, known=known, crowded=crowded) if rest else [])
    return [ClaimResult(lost=True) if i in lost else next(results) for i in range(len(candidates))]


def _one_by_one(store: Store, candidates: list[Candidate], *, now: dt.datetime,
                run: DagRun | None, known: Frees | None) -> list[ClaimResult]:
    """Each candidate claimed on its own, in order (a limit was short of their slots together: some will wait,
    ``crowded``). Once a limit refuses one, a later one needing as many of its slots or more is refused with it
    unasked, as the pass would (a slot freed meanwhile goes to the higher priority, at the next pass, not to a
    lower one now)."""
    results: list[ClaimResult] = []
    refused: dict[str, LimitNeed] = {}  # limit id -> the need it refused with the fewest slots
    for c in candidates:
        refusing = next((need for need in c.needs if need.limit_id in refused
                         and need.slots >= refused[need.limit_id].slots), None)
        result = (ClaimResult(refused=refusing.refusal, full=refusing) if refusing is not None else
                  claim_batch(store, [c], now=now, run=run, known=known, crowded=True)[0])
        if result.full is not None and (result.full.limit_id not in refused
                                        or result.full.slots < refused[result.full.limit_id].slots):
            refused[result.full.limit_id] = result.full
        results.append(result)
    return results


@dataclass(frozen=True)
class _ClaimParts:
    """One candidate's claim as ``acquire`` sends it: its queue write's fields and condition, and the new try."""

    claim: Claim
    fields: dict[str, Any]
    expected: TaskInstanceState | None
    try_number: int
    try_id: str
    new_try: bool  # not a deferral's resumed half nor a sensor's next poke
    waited: bool  # it waited for slots, or others of its run will wait for its slots (``Dispatch.waited``)

    @classmethod
    def of(cls, store: Store, candidate: Candidate, now: dt.datetime, crowded: bool = False) -> _ClaimParts:
        # A try resuming after a deferral keeps its number (Airflow counts the two halves as one try) and the
        # slots it kept while deferred (a pool with include_deferred): only the others are taken (``claim_needs``
        # left the kept ones out). A reschedule-mode sensor's next poke keeps its number too (``continues_try``).
        ti = candidate.ti
        resuming, continues = is_resuming(ti), continues_try(ti)
        held = ticket_of(ti) if resuming else None
        if ti.ticket and held is None:
            release_ticket(store, ti)  # a try taken out of holding without its release (a crash between the two)
        try_id = uuid.uuid4().hex
        fields: dict[str, Any] = {"try_number": claim_try_number(ti), "try_id": try_id, "queued_at": now,
                                  "start_date": None, "end_date": None, "lease_expires_at": None, "note": None,
                                  "blocked_reason": None}
        if not continues:  # a new try starts without the previous try's reschedules, as Airflow's new ti.id
            fields.update(reschedule_count=0, first_reschedule_date=None, rescheduled_try_id=None)
        if candidate.create_fields is not None:
            fields = {**candidate.create_fields, **fields}
        expected = None if candidate.create_fields is not None else TaskInstanceState.SCHEDULED

        def holder(ticket: str | None, held_ticket: str | None) -> TransactWrite:
            return store.transition_item(ti.key, expected=[expected], state=TaskInstanceState.QUEUED, ticket=ticket,
                                         held_ticket=held_ticket, fields=fields)

        needs = tuple(Need(need.limit_id, need.slots, need.limit) for need in candidate.needs)
        return cls(Claim(holder, needs, held), fields, expected, fields["try_number"], try_id,
                   not resuming and not continues, crowded or ti.blocked_reason is not None)

    def dispatched(self, store: Store, candidate: Candidate, run: DagRun | None) -> ClaimResult:
        ti = candidate.ti
        if ti.try_number > 0 and self.new_try:
            # A retry supersedes the try that failed: it is kept as the instance's history (the tries routes list
            # it). Written once per try number, so a clear that recorded it first keeps its record.
            store.record_try(as_recorded(ti))
        compute = dict(getattr(candidate.task, "compute", None) or {})
        # The run copied: the caller goes on with its own object, the dispatch may be delivered in this process.
        return ClaimResult(Dispatch(ti.key, self.try_number, self.try_id, executor=executor_for(compute, ti.executor),
                                    compute=compute, waited=self.waited,
                                    run=dataclasses.replace(run) if run is not None else None))


def _acquire(store: Store, claim: Claim, *, queue: Callable[[], bool],
             known: Frees | None) -> Acquired | Full | Lost:
    """``claim`` through ``limits.acquire``, resized where a limit's size changed (``holding.acquire_sized``).
    No need (a resumed try holding all it needs): the queue write alone (``queue``), keeping its ticket."""
    if not claim.needs:
        return Acquired(()) if queue() else Lost((0,))
    return acquire_sized(store, claim, known)


def claimed_meanwhile(store: Store, ti: TaskInstance, *, new: bool) -> bool:
    """Whether another scheduler has claimed ``ti`` (or, ``new``: created it) since it was read as scheduled."""
    return _claimed(ti, store.get_ti(ti.key), new=new)


def _claimed(ti: TaskInstance, current: TaskInstance | None, *, new: bool) -> bool:
    if new:
        return current is not None
    return current is None or current.state != TaskInstanceState.SCHEDULED or current.try_number != ti.try_number


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

