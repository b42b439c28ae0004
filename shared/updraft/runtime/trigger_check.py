"""One look at a polling trigger: what the deferral state machine's check function does on each pass of its
Task/Choice/Wait loop (``updraft.triggers.state_machine``), instead of Airflow's always-on triggerer.

The execution's state is the function's input and its answer is the next state: the input plus ``outcome``
(``fired``, ``timed_out``, ``waiting``, or ``gone`` when the deferred try is no longer that try),
``poll_seconds`` (how long the Wait before the next look lasts: the trigger's interval, doubling after each look
for a sensor with ``exponential_backoff``, up to its ``max_wait``; ``backoff_seconds``) and ``looks`` (how many
looks found nothing so far). The trigger is rebuilt from the deferred try's record (Airflow's ``serialize()``
classpath and kwargs) and looked at once (``runtime.trigger_look``, which says how each kind of trigger is polled).

A fired event is written on the deferred try's trigger record (fenced by the try token, so a duplicate check
changes nothing) before the loop sends the usual resume, which reads it from there as it does a time trigger's.

The trigger is user code, so the look runs in a child of the task server (``supervisor.TaskSupervisor.poll_trigger``),
as a try does: the DAG-code role's credentials, the store only through the worker's proxy, read-only (Airflow's
triggerer lets a trigger read, never write). The check function keeps its own credentials for the two things it
does itself: reading the deferred try and writing the fired event. Everything the loop needs next is in the
execution's state, so the child keeps nothing between looks. The child's half is its own module, which never
imports this one: the process boundary is a security boundary.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from updraft.model.asset_watches import WATCH_KIND
from updraft.model.deferrals import ResumeRequest
from updraft.model.states import TaskInstanceState
from updraft.runtime.supervisor import TriggerFailed, TriggerLook, shared_supervisor
from updraft.runtime.trigger_look import MIN_POLL_SECONDS, STEP_SECONDS, look
from updraft.store.api import Store


def backoff_seconds(interval: float, looks: int, record: dict[str, Any]) -> float:
    """The wait after the ``looks``-th look that found nothing: the trigger's interval, or for a sensor with
    ``exponential_backoff`` that interval doubled after each look (``interval * 2 ** (looks - 1)``), at most its
    ``max_wait``. The count of looks lives in the execution's state, as everything the loop knows."""
    if not record.get("exponential_backoff"):
        return interval
    wait = interval * 2.0 ** min(looks - 1, 40)
    max_wait = record.get("max_wait_s")
    return min(wait, float(max_wait)) if max_wait else wait


def check(state: dict[str, Any], *, store: Store, now: dt.datetime, step_seconds: float = STEP_SECONDS,
          credentials: Mapping[str, str] | None = None, dags_folder: str | None = None,
          plugins_folder: str | None = None, in_process: bool = False) -> dict[str, Any]:
    """The execution's next state after one look at the deferred try's trigger, taken in a child with
    ``credentials`` (the DAG-code role's environment; none without) and the DAGs and plugins folders importable (a
    user's trigger class may live there: Airflow puts both on the triggerer's path). ``in_process`` looks here,
    still with only ``credentials`` for AWS: for tests whose trigger reads the test's own memory. A polled asset
    watcher's execution (``kind`` ``watch``) is checked by ``runtime.asset_watch``."""
    if state.get("kind") == WATCH_KIND:
        # lazy: cold start (asset watchers and the store only for a watch execution)
        from updraft.runtime.asset_watch import check_watch

        return check_watch(state, store=store, now=now, step_seconds=step_seconds, credentials=credentials,
                           dags_folder=dags_folder, plugins_folder=plugins_folder, in_process=in_process)
    request = ResumeRequest.from_payload(state.get("resume"))
    if request is None:
        raise ValueError("the check's input has no resume payload")
    ti = store.get_ti(request.key)
    if ti is None or ti.state != TaskInstanceState.DEFERRED or ti.try_id != request.try_id:
        return {**state, "outcome": "gone"}
    record = dict(ti.trigger or {})
    timeout_at = dt.datetime.fromisoformat(record["timeout_at"]) if record.get("timeout_at") else None
    if timeout_at is not None and now >= timeout_at:
        return {**state, "outcome": "timed_out"}
    try:
        if in_process:
            try:
                found = TriggerLook(**look(str(record["classpath"]), dict(record.get("kwargs") or {}), store,
                                           step_seconds=step_seconds, credentials=credentials))
            except Exception as exc:  # what the child would have reported
                raise TriggerFailed(f"{type(exc).__name__}: {exc}") from exc
        else:
            found = shared_supervisor().poll_trigger(request.key, request.try_id, record, store=store,
                                                     now_fn=lambda: now, credentials=credentials,
                                                     step_seconds=step_seconds, dags_folder=dags_folder,
                                                     plugins_folder=plugins_folder)
    except TriggerFailed as exc:  # as Airflow's triggerer: the try resumes only to fail, with the error
        return _end(state, store, request, record, {"failure": [str(exc)]})
    if not found.fired:
        looks = int(state.get("looks", 0)) + 1
        wait = backoff_seconds(found.poll_seconds, looks, record)
        if timeout_at is not None:  # look once more at the timeout, not an interval past it
            wait = min(wait, (timeout_at - now).total_seconds())
        return {**state, "outcome": "waiting", "looks": looks, "poll_seconds": max(MIN_POLL_SECONDS, round(wait))}
    return _end(state, store, request, record, {"event": found.event})


def _end(state: dict[str, Any], store: Store, request: ResumeRequest, record: dict[str, Any],
         ending: dict[str, Any]) -> dict[str, Any]:
    """Record how the wait ended (its event, or the trigger's failure) on the deferred try, fenced by its token, and
    answer ``fired`` so the loop resumes the try (``scheduling.deferrals.resume_change`` reads the record)."""
    ended = {**record, **ending, "times_out": False}
    if not store.apply_ti_change(request.key, expected=TaskInstanceState.DEFERRED, state=TaskInstanceState.DEFERRED,
                                 expected_try_id=request.try_id, fields={"trigger": ended}):
        return {**state, "outcome": "gone"}
    return {**state, "outcome": "fired"}
