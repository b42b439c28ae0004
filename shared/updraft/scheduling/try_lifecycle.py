"""A try's life as the scheduler sees it: started, finished, and which hop schedules the run next.

Every write is conditional on the try's ``try_id``: a duplicate dispatch, a late report from a try that was
already failed as a zombie, or a report for an older try after a retry all lose cleanly and change nothing.
``next_hop`` is the scheduling policy a worker follows once its try is recorded (``runtime/worker.py`` runs it).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from updraft import limits
from updraft.model.deferrals import Deferral
from updraft.model.limits import DEFAULT_POOL, pool_of
from updraft.model.records import TaskInstance, TIKey
from updraft.model.states import TaskInstanceState
from updraft.model.usage import Usage, accumulated
from updraft.scheduling.decisions.retries import failure_outcome
from updraft.scheduling.decisions.skips import deepest_first
from updraft.scheduling.deferrals import defer_try
from updraft.scheduling.holding import held_limit_ids, limits_table, ticket_of
from updraft.serialization.model import SerializedDAG
from updraft.store.api import Store
from updraft.store.writes import TransactWrite

DEFAULT_LEASE = dt.timedelta(minutes=5)


@dataclass
class TryResult:
    """A finished try as the worker saw it."""

    state: TaskInstanceState  # success, failed, skipped (failed may become up_for_retry here)
    force_fail: bool = False  # AirflowFailException / sensor timeout / a retry policy's FAIL: no retry
    retry_delay: dt.timedelta | None = None  # a retry policy's delay for this retry, over the task's own
    xcom_length: int | None = None  # len(return_value) for mapping downstream, when it has one
    skip_task_ids: list[str] = field(default_factory=list)  # branch / short-circuit decisions
    note: str | None = None
    deferral: Deferral | None = None  # state deferred: what the try waits for (``model.deferrals``)
    reschedule_date: dt.datetime | None = None  # state up_for_reschedule: when the sensor wants its next poke
    usage: Usage | None = None  # what the try used (``runtime.usage_meter``), recorded by its end write
    # The try's rendered template fields its worker still held (``runtime.rendered_fields.HeldFields``): its end
    # write carries them.
    rendered_fields: Mapping[str, Any] | None = None


def start_try(store: Store, key: TIKey, try_id: str, *, now: dt.datetime, hostname: str | None = None,
              lease: dt.timedelta = DEFAULT_LEASE) -> TaskInstance | None:
    """queued -> running for exactly this try; None means do not run (duplicate or superseded dispatch).
    The instance returned is the try as started, which ``finish_try`` can take instead of reading it again."""
    return store.start_ti(key, try_id=try_id,
                          fields={"start_date": now, "lease_expires_at": now + lease, "hostname": hostname})


@dataclass(frozen=True)
class TryEnd:
    """A try's end as decided and not written yet: the instance as it ran (``ti``), the state and fields its end
    writes, the ticket it gives back (None: it holds none). ``holder`` builds that write for ``updraft.limits``
    (conditional on the instance running this try and carrying the ticket as read)."""

    ti: TaskInstance
    try_id: str
    state: TaskInstanceState
    fields: Mapping[str, object]
    ticket: limits.Ticket | None

    def holder(self, store: Store) -> limits.HolderWrite:
        def end(left: str | None, held: str | None) -> TransactWrite:
            return store.transition_item(self.ti.key, expected=[TaskInstanceState.RUNNING], state=self.state,
                                         ticket=left, held_ticket=held, expected_try_id=self.try_id,
                                         fields=self.fields)

        return end

    @property
    def ended(self) -> TaskInstance:
        """The instance in the state its try ended in (its ticket as held while running: see ``finish_try``),
        with the retry's moment, so whoever reported it can wake the scheduler then (``wakeups.wake_for_retry``)."""
        if self.state == TaskInstanceState.UP_FOR_RESCHEDULE:
            return dataclasses.replace(self.ti, state=self.state)
        retry_at = self.fields.get("next_retry_at", self.ti.next_retry_at)
        return dataclasses.replace(self.ti, state=self.state,
                                   next_retry_at=retry_at if isinstance(retry_at, dt.datetime) else None)


# Sends a successful try's end with the claim of the next instance waiting for its slots (``waiting_claims``):
# True, the end landed; False, its write was refused (the try was ended elsewhere); None, it was not sent.
EndWithClaim = Callable[[TryEnd], "bool | None"]


def finish_try(store: Store, key: TIKey, try_id: str, result: TryResult, *, now: dt.datetime,
               dag: SerializedDAG, started: TaskInstance | None = None,
               hand_over: EndWithClaim | None = None) -> TaskInstance | None:
    """Record the try's outcome (retry or fail as the task's retries decide), free its slots, apply skips.

    Returns the instance as it was while running, in the state its try ended in (falsy: the try was ended
    elsewhere); the mini scheduler decides from that state (``scheduling.downstream``). A try holding a ticket
    ends and gives its slots back in one transaction (``updraft.limits.release``), conditional on its try and its
    ticket; a successful one that skipped nothing is offered to ``hand_over`` first, which may send its end with
    the claim of an instance waiting for its slots instead. The answer keeps the ticket as held while running (the
    stored instance has none): it names the limits the end gave back, which the worker's next hop and
    ``waiting_claims`` decide from.
    """
    # ``started`` (what start_try returned) saves a read; whether the try is still running is then decided by
    # the fenced write below, as it is when the read was made.
    ti = started if started is not None and started.try_id == try_id else store.get_ti(key)
    if ti is None or ti.try_id != try_id or ti.state != TaskInstanceState.RUNNING:
        return None
    usage = accumulated(ti.usage, result.usage) if result.usage is not None else None
    if result.state == TaskInstanceState.DEFERRED and result.deferral is not None:
        # releases what it does not keep
        return defer_try(store, key, try_id, result.deferral, ti=ti, now=now, usage=usage,
                         rendered_fields=result.rendered_fields)
    task = dag.task_dict[key.task_id]
    # A try that ends ends its deferral too (Airflow clears next_method/next_kwargs when the task finishes).
    fields: dict[str, object] = {"end_date": now, "lease_expires_at": None, "note": result.note,
                                 "trigger": None, "next_method": None, "next_kwargs": None}
    state = result.state
    if state == TaskInstanceState.FAILED:
        state, extra = failure_outcome(task, ti, now, force_fail=result.force_fail, retry_delay=result.retry_delay)
        fields.update(extra)
    fields.update(reschedule_fields(ti, try_id, result))
    if result.xcom_length is not None:
        fields["xcom_length"] = result.xcom_length
    if usage is not None:
        fields["usage"] = usage
    if result.rendered_fields is not None:
        fields["rendered_fields"] = dict(result.rendered_fields)
    # Skips first, while the branching task is still running, as Airflow 3's SkipDownstreamTasks is sent before
    # SucceedTask: once the branch is success a concurrent scheduler pass may already have scheduled the tasks it
    # meant to skip, and a skip then comes too late for them. Deepest first, so a pass between two of these writes
    # never sees a skipped task whose skipped downstream is not written yet (``decisions.skips.deepest_first``).
    for task_id in deepest_first(dag, result.skip_task_ids):
        # Skipped before it ever ran; if it already has a state, the branch decision came too late for it.
        store.create_ti(TIKey(key.dag_id, key.run_id, task_id), state=TaskInstanceState.SKIPPED,
                        fields={"start_date": now, "end_date": now, "note": f"skipped by {key.task_id}"})
    end = TryEnd(ti, try_id, state, fields, ticket_of(ti))
    if end.ticket is None:
        return end.ended if store.end_try(key, try_id=try_id, state=state, fields=fields) else None
    landed = (hand_over(end) if hand_over is not None and state == TaskInstanceState.SUCCESS
              and not result.skip_task_ids else None)
    if landed is None:  # the end and the release of its ticket in one transaction
        landed = limits.release(limits_table(store), end.holder(store), end.ticket)
    return end.ended if landed else None


def reschedule_fields(ti: TaskInstance, try_id: str, result: TryResult) -> dict[str, object]:
    """Airflow's TaskReschedule bookkeeping for a try that ends: a reschedule counts one more and remembers when
    the first poke started; whatever the end, the try's start_date is its first poke's, as Airflow shows it."""
    first = ti.first_reschedule_date
    if result.state != TaskInstanceState.UP_FOR_RESCHEDULE:
        return {"start_date": first} if first is not None else {}
    if result.reschedule_date is None:
        raise ValueError("an up_for_reschedule result needs its reschedule_date")
    first = first or ti.start_date
    return {"next_retry_at": result.reschedule_date, "reschedule_count": ti.reschedule_count + 1,
            "first_reschedule_date": first, "rescheduled_try_id": try_id, "start_date": first}


class NextHop(enum.Enum):
    """Who schedules the run after a try finished (its slots went back with its end: ``finish_try``)."""

    # A downstream task waits on this one alone: schedule it here at once (a chain, a fan-out and a mapped task
    # start without another hop).
    SCHEDULE_HERE = "schedule_here"
    # Hand the run to the scheduler function (or, without one, schedule it here).
    HAND_OFF = "hand_off"


def next_hop(dag: SerializedDAG, task_id: str, finished: TaskInstance | None) -> NextHop:
    """The hop a worker takes after recording its try ``finished`` (None: the try was ended elsewhere).

    A fan-in's upstreams finishing together cost the scheduler a few coalesced evaluations of the run instead of
    one full read of the run per upstream in every worker, so only a sole successor is scheduled in the worker.
    A try that held a named pool releases first whatever follows: see ``holds_a_named_pool``. A mapped instance's
    end is scheduled here too, so that in a run where its task's instances wait for slots it hands its slots to
    the next one (``waiting_claims``) instead of a release now and a take after.
    """
    if ((has_sole_successor(dag, task_id) or dag.task_dict[task_id].is_mapped)
            and not holds_a_named_pool(finished)):
        return NextHop.SCHEDULE_HERE
    return NextHop.HAND_OFF


def has_sole_successor(dag: SerializedDAG, task_id: str) -> bool:
    """Whether some downstream task has ``task_id`` as its only upstream (a chain, a fan-out, a mapped task)."""
    task = dag.task_dict[task_id]
    return any(set(dag.task_dict[down].upstream_task_ids) == {task_id} for down in task.downstream_task_ids)


def holds_a_named_pool(finished: TaskInstance | None) -> bool:
    """A named pool is small and often full: its slot goes back first, so the claim sees the pool as it is and
    takes the highest-priority task that fits (a 2-slot task must see both slots free)."""
    return bool(finished) and any(pool_of(limit) not in (None, DEFAULT_POOL)
                                  for limit in (held_limit_ids(finished) if finished else ()))
