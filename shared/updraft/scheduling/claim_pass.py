"""The claim pass: a pass's scheduled instances, highest priority first, each claimed or told why not.

Built from the store, the executor the claimed tries go to and the DAG lookup; ``claims`` holds the protocol
(a claim is one transaction; tries of one run next in order with the same limits are claimed together, up to
``claims.BATCH``). A pass remembers the limits it found full so it stops asking them, writes every new instance
no claim created as scheduled, and stores on each instance it could not claim why (only when that changed, so
an instance that stays blocked costs no write per pass; the mini scheduler leaves stored instances to the tick).
Concurrent schedulers claim apart: equal instances are cut into buckets, each pass starts at a random one, and a
race lost in a bucket leaves it to the scheduler met there (``spread_ties``). A run whose ready tries are many
and all fit is claimed in shares by scheduler invocations the pass asks (``claim_shares``).
"""

from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import functools
import random
import time
from collections.abc import Callable

from updraft.executors.base import Executor
from updraft.limits import Frees
from updraft.model.limits import DEFAULT_POOL, DEFAULT_POOL_SLOTS, PARALLELISM_LIMIT, run_tasks_limit
from updraft.model.records import DagRun, TaskInstance, TIKey
from updraft.model.states import TaskInstanceState
from updraft.scheduling.claim_shares import AskShare, Share, ask_shares, share_count
from updraft.scheduling.claims import (
    BATCH,
    Candidate,
    ClaimResult,
    Handing,
    LimitNeed,
    claim_batch,
    claim_needs,
    claimed_meanwhile,
)
from updraft.scheduling.concurrent_writes import concurrently
from updraft.scheduling.decisions.blocked import BlockedReason, BlockKind
from updraft.scheduling.decisions.changes import TIChange
from updraft.scheduling.decisions.ordering import claim_order
from updraft.scheduling.deferrals import is_resuming
from updraft.scheduling.pass_invokes import InvokePool, PassInvokes
from updraft.scheduling.pass_report import PassReport
from updraft.scheduling.waiting_claims import index_pays
from updraft.serialization.model import SerializedDAG
from updraft.store import keys
from updraft.store.api import Store

POOL_SIZE_TTL_S = 10.0


def take_creations(creations: dict[TIKey, TIChange], run: tuple[str, str] | None = None) -> list[TIChange]:
    """Remove and return the pending creations (of one run, when given)."""
    keys = [k for k in creations if run is None or (k.dag_id, k.run_id) == run]
    return [creations.pop(k) for k in keys]


class ClaimPass:
    def __init__(self, store: Store, executor: Executor, dag: Callable[[str, str], SerializedDAG], *,
                 parallelism: int) -> None:
        self.store = store
        self.executor = executor
        self.dag = dag
        self.parallelism = parallelism
        self._pool_sizes: dict[str, tuple[int, float]] = {}
        self._invokes = InvokePool()
        # Asks a scheduler invocation to claim a share of a wide run's ready tries (``claim_shares``; Services
        # sets it where a scheduler function exists). None: a pass claims every try it finds itself.
        self.ask_share: AskShare | None = None

    def claim(self, candidates: list[tuple[TaskInstance, DagRun]], now: dt.datetime, report: PassReport,
              creations: dict[TIKey, TIChange] | None = None,
              active: dict[tuple[str, str], int] | None = None, *, keep_reasons: bool = True,
              handing: Handing | None = None, shares: dict[tuple[str, str], list[Share]] | None = None) -> None:
        """Claim ``candidates`` in Airflow's order; ``creations`` are instances not written yet, ``active`` the
        queued and running instances per run as evaluated.

        A new instance's reason rides in the write that creates it. A stored one's costs a write of its own, and
        while a fan-out drains, a waiting instance's first refusal flips between the limits that are full together
        (parallelism, max_active_tasks, the pool) from one completion to the next: ``keep_reasons=False`` (the mini
        scheduler) leaves those writes to the tick, so "why" is at most a tick old and the hot path writes nothing
        for the instances it does not claim, but for an instance's first reason: that write puts it in its run's
        waiting index (``store.waiting``), where a later end in the run finds it without reading the run.
        ``handing``: a try's end whose slots a claim that needs exactly them takes (``claims.claim_batch``).
        ``shares``: the runs whose ready tries were cut into shares (``claim_shares``), with the shares this pass
        claims of each; the other runs' wide claims are shared out here when ``ask_share`` is set (the shares this
        pass keeps go into ``report.shared_out``)."""
        creations = creations if creations is not None else {}
        new = set(creations)  # their reason goes into the write that creates them
        reasons: dict[TIKey, BlockedReason] = {}
        try:
            self._claim_ordered(candidates, now, report, creations, active if active is not None else {}, reasons,
                                handing, shares or {})
        finally:
            indexed = self._indexed(candidates, reasons)
            # Whatever was not claimed (a full limit, no such pool, an error midway) is still scheduled.
            for key, reason in reasons.items():
                if key in creations:
                    change = creations[key]
                    creations[key] = dataclasses.replace(change, fields={**change.fields,
                                                                         "blocked_reason": reason.stored})
            self.create_scheduled(take_creations(creations), indexed=indexed)
            self._store_reasons([ti for ti, _ in candidates if ti.key not in new], reasons, indexed,
                                first_only=not keep_reasons)

    def _indexed(self, candidates: list[tuple[TaskInstance, DagRun]],
                 reasons: dict[TIKey, BlockedReason]) -> set[TIKey]:
        """The refused instances whose reason write puts them in their run's waiting index: those of runs where
        an end reads the index rather than the run (``waiting_claims.index_pays``); elsewhere it is never read.
        Not one refused for a pool that does not exist: no slot an end frees can start it, and as the index's
        first hit (a higher priority) it was the instance every end tried and the only one, so the run's ends
        claimed nothing until the tick (the tick claims it once the pool exists)."""
        runs = {(run.dag_id, run.run_id): run for _, run in candidates}
        pays = {key: index_pays(self.dag(run.dag_id, run.dag_hash)) for key, run in runs.items()}
        return {key for key, reason in reasons.items()
                if pays.get((key.dag_id, key.run_id), False) and reason.kind is not BlockKind.POOL_MISSING}

    def create_scheduled(self, changes: list[TIChange], *, indexed: set[TIKey] | None = None) -> None:
        """Write, as scheduled, new instances no claim created (the next pass finds them, as without merging);
        those ``indexed`` enter their run's waiting index. Independent conditional puts (a fan-out's hundreds of
        new instances): sent together."""
        concurrently([functools.partial(self.store.create_ti, change.key, state=change.state, fields=change.fields,
                                        waiting_index=change.key in (indexed or ()))
                      for change in changes])

    def _store_reasons(self, stored: list[TaskInstance], reasons: dict[TIKey, BlockedReason], indexed: set[TIKey],
                       *, first_only: bool) -> None:
        """The reason on each stored instance not claimed, when it differs from the one it carries already
        (``first_only``: an ``indexed`` one's first reason only). An ``indexed`` one's priority weight goes with
        it: with its reason, it enters its run's waiting index (``store.waiting``)."""
        changed = [ti for ti in stored if ti.key in reasons and ti.state == TaskInstanceState.SCHEDULED
                   and ti.blocked_reason != reasons[ti.key].stored
                   and not (first_only and (ti.blocked_reason or ti.key not in indexed))]
        concurrently([functools.partial(self.store.set_blocked_reason, ti.key, reasons[ti.key].stored,
                                        priority_weight=ti.priority_weight if ti.key in indexed else None)
                      for ti in changed])

    def _claim_ordered(self, candidates: list[tuple[TaskInstance, DagRun]], now: dt.datetime, report: PassReport,
                       creations: dict[TIKey, TIChange], active: dict[tuple[str, str], int],
                       reasons: dict[TIKey, BlockedReason], handing: Handing | None,
                       shares: dict[tuple[str, str], list[Share]]) -> None:
        if not candidates:
            return
        invokes = PassInvokes(self.executor, self._invokes)
        try:
            self._claim_each(candidates, now, report, creations, active, reasons, invokes, handing, shares)
        finally:
            invokes.wait()  # every claimed try handed over (or its refusal logged) before the pass returns

    def _claim_each(self, candidates: list[tuple[TaskInstance, DagRun]], now: dt.datetime, report: PassReport,
                    creations: dict[TIKey, TIChange], active: dict[tuple[str, str], int],
                    reasons: dict[TIKey, BlockedReason], invokes: PassInvokes, handing: Handing | None,
                    shares: dict[tuple[str, str], list[Share]]) -> None:
        runs = {(run.dag_id, run.run_id): run for _, run in candidates}
        ordered = spread_ties(claim_order([ti for ti, _ in candidates], list(runs.values())), runs,
                              random.randrange(BUCKETS))
        if self.ask_share is not None:
            shares = {**self._share_out(self.ask_share, ordered, runs, active, shares, report), **shares}
        if shares:
            others = {ti.key for ti in ordered if not _in_shares(ti, shares)}
            for key in others:
                creations.pop(key, None)  # another invocation claims its share: its new instances are its to create
            ordered = [ti for ti in ordered if ti.key not in others]
        # Runs with more ready instances than their max_active_tasks leaves (as evaluated): some will wait, so
        # the tries claimed now are dispatched as if claimed from waiting ones (``Dispatch.waited``).
        ready = collections.Counter((ti.dag_id, ti.run_id) for ti in ordered)
        crowded = {key for key, count in ready.items()
                   if count > self.dag(key[0], runs[key].dag_hash).max_active_tasks - active.get(key, 0)}
        left: set[tuple[Tie, int]] = set()  # buckets where a race was lost: another scheduler claims them
        checked: set[tuple[Tie, int]] = set()  # buckets this pass has entered
        pool_sizes: dict[str, int | None] = {}
        # Limits found full in this pass, with the fewest slots that did not fit: asking again is a wasted write.
        full: dict[str, int] = {}
        known = Frees()  # where this pass saw room in the limits' shards: its next takes go there first

        def refuse(ti: TaskInstance, reason: BlockedReason, limit: LimitNeed | None = None) -> None:
            report.not_claimed[ti.key.label] = reasons[ti.key] = reason
            if limit is not None:
                report.full_limits.add(limit.limit_id)

        def plan(ti: TaskInstance) -> list[LimitNeed] | tuple[BlockedReason, LimitNeed | None]:
            """The limits a claim of ``ti`` takes, or why the pass does not claim it (and the limit that says so)."""
            if ti.pool not in pool_sizes:
                pool_sizes[ti.pool] = self.pool_size(ti.pool)
            run = runs[(ti.dag_id, ti.run_id)]
            dag = self.dag(run.dag_id, run.dag_hash)
            needs = claim_needs(ti, dag.task_dict[ti.task_id], dag, parallelism=self.parallelism,
                                pool_sizes=pool_sizes)
            if isinstance(needs, BlockedReason):
                return needs, None
            blocked = next((n for n in needs if n.slots >= full.get(n.limit_id, n.slots + 1)), None)
            if blocked is None and active.get((ti.dag_id, ti.run_id), 0) >= dag.max_active_tasks:
                # The run holds its max_active_tasks already (as evaluated): the limit is surely full, and asking
                # it costs writes to take and give back (many, when a fan-out's tasks finish together).
                blocked = next(n for n in needs if n.limit_id == run_tasks_limit(ti.dag_id, ti.run_id))
            if blocked is None and 0 < self.parallelism <= sum(active.values()):
                # The runs this pass evaluated hold the whole parallelism already (as read): surely full. A slot
                # freed since that read is the ending try's path to fill, from its own read, which sees that
                # try's successors: a claim from this older read could start a lighter try ahead of them.
                blocked = next((n for n in needs if n.limit_id == PARALLELISM_LIMIT), None)
            return (blocked.refusal, blocked) if blocked is not None else needs

        def settle(ti: TaskInstance, group: tuple[Tie, int], result: ClaimResult) -> None:
            if result.stale:
                # What this pass read of the run is stale (another scheduler created its instances meanwhile):
                # more claims and creations from it would be writes lost in advance. The run is read again.
                report.stale_runs.add((ti.dag_id, ti.run_id))
                take_creations(creations, (ti.dag_id, ti.run_id))
            elif result.lost:
                # Another scheduler is claiming this instance or claimed it meanwhile: it works this bucket, so the
                # bucket is left to it and the pass goes on in the next one.
                left.add(group)
                creations.pop(ti.key, None)
            elif result.dispatch is not None:
                creations.pop(ti.key, None)  # created, queued, by this claim (when it was new)
                active[(ti.dag_id, ti.run_id)] = active.get((ti.dag_id, ti.run_id), 0) + 1
                report.dispatched.append(result.dispatch)
                invokes.send(result.dispatch)
            elif result.refused is not None:
                if result.full is not None:
                    full[result.full.limit_id] = min(full.get(result.full.limit_id, result.full.slots),
                                                     result.full.slots)
                refuse(ti, result.refused, result.full)

        batched: set[TIKey] = set()  # claimed with an earlier try of their run
        for position, ti in enumerate(ordered):
            if (ti.dag_id, ti.run_id) in report.stale_runs or ti.key in batched:
                continue
            group = (tie_of(ti, runs), bucket_of(ti))
            if group not in checked and left:
                # A race was lost: other schedulers are claiming from this pass's read. A bucket's first instance
                # is read before it is claimed (one small read against a lost claim's takes and give-backs).
                checked.add(group)
                if claimed_meanwhile(self.store, ti, new=ti.key in creations):
                    left.add(group)
            checked.add(group)
            if group in left:
                # Another scheduler claims this bucket: its new instances are its to create (or, should it stop,
                # the next evaluation's: an instance nobody wrote is evaluated again).
                creations.pop(ti.key, None)
                continue
            run = runs[(ti.dag_id, ti.run_id)]
            dag = self.dag(run.dag_id, run.dag_hash)
            needs = plan(ti)
            if isinstance(needs, tuple):
                refuse(ti, *needs)
                continue
            batch = [self._candidate(ti, dag, needs, creations)]
            if not is_resuming(ti):
                # The tries next in order of the same run with the same limits, claimed with it in one
                # transaction, as many as its max_active_tasks leaves (as evaluated). The first that differs ends
                # the batch: nothing is claimed ahead of a try before it in Airflow's order. Once a race was
                # lost, a batch stays in its bucket: the next may be another scheduler's.
                room = min(BATCH, dag.max_active_tasks - active.get((ti.dag_id, ti.run_id), 0),
                           self.parallelism - sum(active.values()) if self.parallelism > 0 else BATCH)
                for later in ordered[position + 1:]:
                    if len(batch) >= room or (later.dag_id, later.run_id) != (ti.dag_id, ti.run_id) \
                            or is_resuming(later) or (left and (tie_of(later, runs), bucket_of(later)) != group):
                        break
                    later_needs = plan(later)
                    if isinstance(later_needs, tuple) \
                            or [n.limit_id for n in later_needs] != [n.limit_id for n in needs]:
                        break
                    checked.add((tie_of(later, runs), bucket_of(later)))
                    batch.append(self._candidate(later, dag, later_needs, creations))
            results = claim_batch(self.store, batch, now=now, run=run, known=known, handing=handing,
                                  crowded=(ti.dag_id, ti.run_id) in crowded)
            for candidate, result in zip(batch, results, strict=True):
                batched.add(candidate.ti.key)
                settle(candidate.ti, (tie_of(candidate.ti, runs), bucket_of(candidate.ti)), result)

    def _share_out(self, ask: AskShare, ordered: list[TaskInstance], runs: dict[tuple[str, str], DagRun],
                   active: dict[tuple[str, str], int], shared: dict[tuple[str, str], list[Share]],
                   report: PassReport) -> dict[tuple[str, str], list[Share]]:
        """The runs (not ``shared`` already) whose ready tries this pass cuts into shares, other invocations asked
        for all shares but those it claims itself, returned (and kept in ``report.shared_out``)."""
        if share_count(len(ordered)) == 1:
            return {}  # no run of this pass is wide enough (most passes): nothing grouped
        ready: dict[tuple[str, str], list[TaskInstance]] = {}
        for ti in ordered:
            ready.setdefault((ti.dag_id, ti.run_id), []).append(ti)
        kept: dict[tuple[str, str], list[Share]] = {}
        for key, tis in ready.items():
            count = share_count(len(tis))
            if key not in shared and count > 1 and self._all_fit(tis, runs[key], active):
                kept[key] = report.shared_out[key] = ask_shares(ask, *key, count)
        return kept

    def _all_fit(self, tis: list[TaskInstance], run: DagRun, active: dict[tuple[str, str], int]) -> bool:
        """Whether every one of a run's ready tries ``tis`` fits the room its limits leave, as this pass read them:
        then the order they are claimed in cannot matter (``claim_shares``)."""
        dag = self.dag(run.dag_id, run.dag_hash)
        pool_sizes = {pool: self.pool_size(pool) for pool in {ti.pool for ti in tis}}
        taken: collections.Counter[str] = collections.Counter()
        sizes: dict[str, int] = {}
        for ti in tis:
            needs = claim_needs(ti, dag.task_dict[ti.task_id], dag, parallelism=self.parallelism,
                                pool_sizes=pool_sizes)
            if isinstance(needs, BlockedReason):
                return False
            for need in needs:
                taken[need.limit_id] += need.slots
                sizes[need.limit_id] = need.limit
        held = {run_tasks_limit(run.dag_id, run.run_id): active.get((run.dag_id, run.run_id), 0),
                PARALLELISM_LIMIT: sum(active.values())}
        unlimited = {PARALLELISM_LIMIT} if self.parallelism <= 0 else set()
        return all(limit in unlimited or sizes[limit] < 0 or slots + held.get(limit, 0) <= sizes[limit]
                   for limit, slots in taken.items())

    @staticmethod
    def _candidate(ti: TaskInstance, dag: SerializedDAG, needs: list[LimitNeed],
                   creations: dict[TIKey, TIChange]) -> Candidate:
        creation = creations.get(ti.key)
        return Candidate(ti, dag.task_dict[ti.task_id], needs, creation.fields if creation is not None else None)

    def pool_size(self, name: str) -> int | None:
        """A pool's size, remembered for POOL_SIZE_TTL: it only screens out tries that can never fit (the limit
        item's conditional write is what holds the pool), so a resize seen a few seconds late only delays a
        try, and a pool not found is asked again every time so a new pool is usable at once. One read (the
        size alone, not the holders); a missing default_pool has the size its first take creates it at."""
        cached = self._pool_sizes.get(name)
        if cached is not None and time.monotonic() - cached[1] < POOL_SIZE_TTL_S:
            return cached[0]
        slots = self.store.pool_slots(name)
        if slots is None and name == DEFAULT_POOL:
            slots = DEFAULT_POOL_SLOTS
        if slots is None:
            return None
        self._pool_sizes[name] = (slots, time.monotonic())
        return slots


# The buckets a tie group of ready instances is cut into (by a hash of each instance's key) so that concurrent
# schedulers claim apart: enough that 8 schedulers mostly start in different ones.
BUCKETS = 16

Tie = tuple[int, object, int]


def _in_shares(ti: TaskInstance, shares: dict[tuple[str, str], list[Share]]) -> bool:
    """Whether this pass claims ``ti``: its run was not cut into shares, or ``ti`` is in one of this pass's."""
    mine = shares.get((ti.dag_id, ti.run_id))
    return mine is None or any(share.holds(ti.key) for share in mine)


def tie_of(ti: TaskInstance, runs: dict[tuple[str, str], DagRun]) -> Tie:
    """What Airflow's claim order cannot tell apart: priority weight, run date, map index."""
    return ti.priority_weight, runs[(ti.dag_id, ti.run_id)].logical_date, ti.map_index


def bucket_of(ti: TaskInstance) -> int:
    """The bucket an instance falls in: the same in every scheduler, so schedulers agree on what a bucket is."""
    return keys.shard(ti.key.label, BUCKETS)


def spread_ties(ordered: list[TaskInstance], runs: dict[tuple[str, str], DagRun], start: int) -> list[TaskInstance]:
    """Order instances that tie on priority, run date and map index by bucket, starting at bucket ``start`` and
    wrapping round (within a bucket by key), keeping Airflow's order between ties.

    Concurrent schedulers read the same runs; with one order they would all race for the same first instances and
    lose most claims. Each pass starts at a random bucket, so schedulers start apart and walk their own buckets;
    one that loses a race in a bucket leaves the rest of it to the scheduler it met there (``ClaimPass``). Alone,
    a scheduler walks every bucket: nothing is left to a scheduler that is not there.
    """
    groups: dict[Tie, list[TaskInstance]] = {}
    for ti in ordered:  # dicts keep insertion order: the groups stay in Airflow's order
        groups.setdefault(tie_of(ti, runs), []).append(ti)
    return [ti for group in groups.values()
            for ti in sorted(group, key=lambda ti: ((bucket_of(ti) - start) % BUCKETS, ti.key.label))]
