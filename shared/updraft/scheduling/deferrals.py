"""A deferred try, as the scheduler sees it: recorded and released, resumed (or failed, or ended) when its wait
ends, and its wait stopped when a user ends the try first.

- ``defer_try``: running -> deferred, fenced by the try token, recording the trigger and the resume point; the try
  gives back its slots except its pool slot when the pool counts deferred tasks (Airflow's ``include_deferred``).
- ``resume_try``: what the wait's end does, fenced by the deferred try's token, so a late or duplicate resume (the
  try was cleared, marked, or already resumed) changes nothing. As Airflow, the try goes back to ``scheduled`` with
  ``next_method``/``next_kwargs`` (the event added) and is claimed as any scheduled instance is, keeping its
  try number; a wait that timed out resumes with Airflow's ``__fail__`` signal (the try fails, retrying if it
  may); ``end_from_trigger`` ends it as success without a worker.
- ``Waits``: where executions are started and stopped (Step Functions on AWS, the local engine locally).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from updraft.limits import release
from updraft.model.deferrals import (
    TRIGGER_FAIL_REPR,
    TRIGGER_FAILURE,
    TRIGGER_TIMEOUT,
    Deferral,
    execution_input,
    execution_name,
    resume_at,
)
from updraft.model.hitl import is_hitl, request_record, timeout_resume
from updraft.model.limits import pool_limit
from updraft.model.records import TaskInstance, TIKey
from updraft.model.states import TaskInstanceState
from updraft.scheduling.decisions.changes import TIChange
from updraft.scheduling.holding import limits_table, releases, ticket_of, transition_releasing
from updraft.store.api import Store

log = logging.getLogger(__name__)

_RESUME_CLEARS = {"trigger": None, "lease_expires_at": None}
# How long past its end a wait may go without its resume before the scheduler resumes the try itself.
RESUME_GRACE = dt.timedelta(minutes=5)


class Waits(Protocol):
    """Starts and stops the executions of deferred tries (both idempotent)."""

    def start(self, name: str, execution_input: dict[str, Any]) -> None: ...

    def stop(self, name: str) -> None: ...


def defer_try(store: Store, key: TIKey, try_id: str, deferral: Deferral, *, ti: TaskInstance,
              now: dt.datetime, usage: dict[str, Any] | None = None,
              rendered_fields: Mapping[str, Any] | None = None) -> TaskInstance | None:
    """running -> deferred for exactly this try, giving its ticket's slots back in the same transaction (its
    pool's stays if the pool counts deferred tasks). Returns the instance as deferred (None: the try was ended
    elsewhere). ``usage``: what the try used so far (``model.usage``), and ``rendered_fields``: its rendered
    template fields its worker still held, both recorded by the same write."""
    record = deferral.to_record()
    fields: dict[str, object] = {"trigger": record, "next_method": deferral.next_method,
                                 "next_kwargs": deferral.next_kwargs, "lease_expires_at": None,
                                 "note": None}
    if is_hitl(record):  # a Human-in-the-loop request: kept on the instance, for this try (``model.hitl``)
        fields["hitl"] = request_record(deferral.kwargs, try_number=ti.try_number, now=now)
    if usage is not None:
        fields["usage"] = usage
    if rendered_fields is not None:
        fields["rendered_fields"] = dict(rendered_fields)
    ticket = ticket_of(ti)
    if ticket is not None:  # the deferral and its release in one transaction, the pool's slot kept if it counts
        keep = {pool_limit(ti.pool)} if ticket.slots(pool_limit(ti.pool)) and _pool_counts_deferred(store, ti) \
            else set()
        kept_ticket = ticket.keeping(keep)
        if not release(limits_table(store),
                       lambda left, held: store.transition_item(key, expected=[TaskInstanceState.RUNNING],
                                                                state=TaskInstanceState.DEFERRED, ticket=left,
                                                                held_ticket=held, expected_try_id=try_id,
                                                                fields=fields), ticket, keep=keep):
            return None
        fields["ticket"] = kept_ticket.encode() if kept_ticket is not None else None
    elif not store.end_try(key, try_id=try_id, state=TaskInstanceState.DEFERRED, fields=fields):
        return None
    return TaskInstance(**{**ti.__dict__, **fields, "state": TaskInstanceState.DEFERRED, "trigger": record,
                           "next_method": deferral.next_method, "next_kwargs": deferral.next_kwargs,
                           "lease_expires_at": None})


def _pool_counts_deferred(store: Store, ti: TaskInstance) -> bool:
    pool = store.get_pool(ti.pool)
    return bool(pool is not None and pool.include_deferred)


def start_wait(waits: Waits, ti: TaskInstance) -> str:
    """Start the execution that waits for ``ti``'s trigger (a repeated start is harmless); its name."""
    if ti.try_id is None:
        raise ValueError(f"{ti.key.label} has no try to wait for")
    name = execution_name(ti.key, ti.try_number, ti.try_id)
    if is_hitl(ti.trigger) and not (ti.trigger or {}).get("timeout_at"):
        return name  # a request without a response timeout: only a response resumes it, nothing to wait for
    waits.start(name, execution_input(ti))
    return name


def stop_waits(waits: Waits | None, tis: Iterable[TaskInstance]) -> None:
    """Stop the executions of the deferred tries among ``tis`` (a user ended them). Best effort: an execution that
    still resumes is fenced out by the try token, so a failure here is logged, never raised."""
    if waits is None:
        return
    for ti in tis:
        if ti.state != TaskInstanceState.DEFERRED or ti.try_id is None:
            continue
        try:
            waits.stop(execution_name(ti.key, ti.try_number, ti.try_id))
        except Exception:
            log.warning("could not stop the wait of %s try %s", ti.key.label, ti.try_number, exc_info=True)


def resume_change(ti: TaskInstance, *, now: dt.datetime) -> TIChange:
    """What the end of deferred ``ti``'s wait writes (fenced by its try): scheduled to resume in next_method with
    the event, scheduled to fail (the trigger raised, or a timeout: Airflow's ``__fail__``), or success
    (``end_from_trigger``)."""
    record = ti.trigger or {}
    fields: dict[str, Any]
    if record.get("failure"):  # the trigger raised: Airflow's triggerer fails the try the same way
        fields = {**_RESUME_CLEARS, "next_method": TRIGGER_FAIL_REPR,
                  "next_kwargs": {"error": TRIGGER_FAILURE, "traceback": list(record["failure"])}}
        state = TaskInstanceState.SCHEDULED
    elif record.get("times_out"):
        fields = {**_RESUME_CLEARS, "next_method": TRIGGER_FAIL_REPR,
                                  "next_kwargs": {"error": TRIGGER_TIMEOUT}}
        state = TaskInstanceState.SCHEDULED
    elif is_hitl(record):  # its response timeout passed (a response resumes it without the wait)
        event, answered = timeout_resume(ti.hitl, now)
        fields = {**_RESUME_CLEARS, "next_method": ti.next_method,
                  "next_kwargs": {**(ti.next_kwargs or {}), "event": event}}
        if answered is not None:
            fields["hitl"] = answered
        state = TaskInstanceState.SCHEDULED
    elif record.get("end_from_trigger"):
        fields = {**_RESUME_CLEARS, "next_method": None, "next_kwargs": None, "end_date": now}
        state = TaskInstanceState.SUCCESS
    else:
        fields = {**_RESUME_CLEARS, "next_method": ti.next_method,
                  "next_kwargs": {**(ti.next_kwargs or {}), "event": record.get("event")}}
        state = TaskInstanceState.SCHEDULED
    return TIChange(ti.key, TaskInstanceState.DEFERRED, state, fields, expected_try_id=ti.try_id)


def overdue_resume(ti: TaskInstance, now: dt.datetime) -> TIChange | None:
    """The scheduler's backstop for a wait whose resume never came (its execution was never started, failed, or
    was lost): once ``RESUME_GRACE`` past its end, the scheduler resumes the try itself."""
    end = resume_at(ti)
    if ti.state != TaskInstanceState.DEFERRED or end is None or end + RESUME_GRACE > now:
        return None
    return resume_change(ti, now=now)


def resume_try(store: Store, key: TIKey, try_id: str, *, now: dt.datetime) -> TaskInstanceState | None:
    """The wait of the deferred try ``try_id`` ended: write ``resume_change``. Returns the state written; None
    when the try is not that deferred try any more (a late or duplicate resume changes nothing)."""
    ti = store.get_ti(key)
    if ti is None or ti.state != TaskInstanceState.DEFERRED or ti.try_id != try_id:
        return None
    change = resume_change(ti, now=now)
    if releases(ti, change.state):  # ended from its trigger: the end and the release of its ticket, one transaction
        if not transition_releasing(store, ti, expected=[change.expected], state=change.state,
                                    expected_try_id=try_id, fields=change.fields):
            return None
    elif not store.apply_ti_change(key, expected=change.expected, state=change.state, expected_try_id=try_id,
                                   fields=change.fields):
        return None
    return change.state


def is_resuming(ti: TaskInstance) -> bool:
    """A scheduled instance whose try resumes after a deferral: its claim keeps the try number (Airflow counts a
    deferral and its resumption as one try) and the slots it kept."""
    return ti.state == TaskInstanceState.SCHEDULED and ti.next_method is not None
