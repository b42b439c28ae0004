"""One look at a polling trigger: what the deferral state machine's check function does on each pass of its
Task/Choice/Wait loop (``updraft.triggers.state_machine``), instead of Airflow's always-on triggerer.

The execution's state is the function's input and its answer is the next state: the input plus ``outcome``
(``fired``, ``timed_out``, ``waiting``, or ``gone`` when the deferred try is no longer that try),
``poll_seconds`` (how long the Wait before the next look lasts: the trigger's interval, doubling after each look
for a sensor with ``exponential_backoff``, up to its ``max_wait``; ``backoff_seconds``) and ``looks`` (how many
looks found nothing so far). The trigger is rebuilt from the deferred try's
record (Airflow's ``serialize()`` classpath and kwargs) and polled once:

- triggers with ``poll_once`` (the cross-DAG ``DagStateTrigger``/``WorkflowTrigger``, ``FileTrigger``): through
  ``runtime.cross_dag.poll_trigger``, a few reads of the store or a glob;
- triggers with ``poll_aws`` (``S3KeyTrigger``): one look with a boto3 session of the environment's DAG-code role
  (``dag_code_session``), never with the check function's own credentials, so a DAG waits only on what its own
  code could read;
- any other ``BaseTrigger`` (a user's trigger): its ``run()`` async generator is run for one step of at most
  ``STEP_SECONDS``; the first event it yields fires, a step that does not yield in time waits on. A trigger that
  sleeps between its looks (as Airflow's do) so costs ``STEP_SECONDS`` of the function per check.

A fired event is written on the deferred try's trigger record (fenced by the try token, so a duplicate check
changes nothing) before the loop sends the usual resume, which reads it from there as it does a time trigger's.

The trigger is user code, so the look (:func:`look`: rebuild, poll, encode the event) runs in a child of the task
server (``supervisor.TaskSupervisor.poll_trigger``), as a try does: the DAG-code role's credentials, the store only
through the worker's proxy, read-only (Airflow's triggerer lets a trigger read, never write). The check function
keeps its own credentials for the two things it does itself: reading the deferred try and writing the fired event.
Everything the loop needs next is in the execution's state, so the child keeps nothing between looks.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import importlib
from collections.abc import Mapping
from typing import Any

from updraft.model.asset_watches import WATCH_KIND
from updraft.model.deferrals import ResumeRequest
from updraft.model.states import TaskInstanceState
from updraft.runtime.cross_dag import poll_trigger
from updraft.runtime.store_proxy import StoreProxy
from updraft.runtime.supervisor import TriggerFailed, TriggerLook, shared_supervisor
from updraft.runtime.xcom import decode_value, encode_value
from updraft.store.api import Store

STEP_SECONDS = 5.0  # the longest one look at an async trigger may take (well inside the function's timeout)
DEFAULT_POLL_SECONDS = 30.0  # between looks at a trigger that names no poll_interval/poke_interval
MIN_POLL_SECONDS = 1  # a Wait state counts whole seconds


# Provider triggers Updraft looks at itself, whichever provider is installed: the real amazon provider's
# S3KeyTrigger needs aiobotocore (the provider's optional "aiobotocore" extra) and runs an async loop per look;
# Updraft's look takes the same serialized arguments and answers the same events with one synchronous call
# (``updraft.triggers.s3``), so S3KeySensor(deferrable=True) works with the provider alone.
NATIVE_TRIGGERS = {"airflow.providers.amazon.aws.triggers.s3.S3KeyTrigger": "updraft.triggers.s3.S3KeyTrigger"}


def rebuild(classpath: str, kwargs: dict[str, Any]) -> Any:
    """The trigger from its ``serialize()`` form, as Airflow's triggerer rebuilds it (``NATIVE_TRIGGERS`` by
    Updraft's own class)."""
    module_name, _, class_name = NATIVE_TRIGGERS.get(classpath, classpath).rpartition(".")
    return getattr(importlib.import_module(module_name), class_name)(**decode_value(kwargs))


def poll_seconds(trigger: Any) -> float:
    """How long to wait between looks: the trigger's own interval (Airflow's names), else the default."""
    for name in ("poll_interval", "poke_interval"):
        value = getattr(trigger, name, None)
        if isinstance(value, dt.timedelta):
            value = value.total_seconds()
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            return float(value)
    return DEFAULT_POLL_SECONDS


def backoff_seconds(interval: float, looks: int, record: dict[str, Any]) -> float:
    """The wait after the ``looks``-th look that found nothing: the trigger's interval, or for a sensor with
    ``exponential_backoff`` that interval doubled after each look (``interval * 2 ** (looks - 1)``), at most its
    ``max_wait``. The count of looks lives in the execution's state, as everything the loop knows."""
    if not record.get("exponential_backoff"):
        return interval
    wait = interval * 2.0 ** min(looks - 1, 40)
    max_wait = record.get("max_wait_s")
    return min(wait, float(max_wait)) if max_wait else wait


async def _first_event(trigger: Any, seconds: float) -> Any:
    events = trigger.run()
    try:
        return await asyncio.wait_for(anext(events), timeout=seconds)
    except TimeoutError:
        return None
    except StopAsyncIteration:
        raise RuntimeError(f"trigger {type(trigger).__name__} ended without an event") from None
    finally:
        await events.aclose()


def dag_code_session(credentials: Mapping[str, str] | None) -> Any:
    """A boto3 session holding only the DAG-code role's credentials (``credentials``: their environment variables;
    in the check's child, its whole scrubbed environment), never a default chain that could find another's; one
    per set of credentials, so a warm task server loads boto3's service models once, not once a look."""
    if not credentials or not credentials.get("AWS_ACCESS_KEY_ID"):
        raise PermissionError("no DAG-code role is configured (UPDRAFT_DAG_CODE_ROLE): a trigger that reads AWS has "
                              "no credentials to look with")
    return _session(credentials["AWS_ACCESS_KEY_ID"], credentials.get("AWS_SECRET_ACCESS_KEY", ""),
                    credentials.get("AWS_SESSION_TOKEN", ""))


@functools.lru_cache(maxsize=2)  # the current credentials, and the previous ones while they are refreshed
def _session(access_key: str, secret_key: str, token: str) -> Any:
    import boto3

    return boto3.Session(aws_access_key_id=access_key, aws_secret_access_key=secret_key, aws_session_token=token)


def poll_once(trigger: Any, store: Store, *, step_seconds: float = STEP_SECONDS,
              credentials: Mapping[str, str] | None = None) -> Any:
    """The event of one look at ``trigger`` (None: not yet)."""
    if callable(getattr(trigger, "poll_once", None)):
        # In a child the store is the worker's proxy: other DAGs' runs are read in the worker.
        return (trigger.poll_once(store.cross_dag()) if isinstance(store, StoreProxy)
                else poll_trigger(trigger, store))
    if callable(getattr(trigger, "poll_aws", None)):
        return trigger.poll_aws(lambda: dag_code_session(credentials))
    return asyncio.run(_first_event(trigger, step_seconds))


def look(classpath: str, kwargs: dict[str, Any], store: Store, *, step_seconds: float,
         credentials: Mapping[str, str] | None) -> dict[str, Any]:
    """One look at the trigger ``classpath(**kwargs)`` where it runs (the check's child): whether it fired, its
    event's payload encoded for the try's record, and the trigger's own interval before the next look, as JSON."""
    trigger = rebuild(classpath, kwargs)
    event = poll_once(trigger, store, step_seconds=step_seconds, credentials=credentials)
    return {"fired": event is not None, "poll_seconds": poll_seconds(trigger),
            "event": None if event is None else encode_value(getattr(event, "payload", event))}


def check(state: dict[str, Any], *, store: Store, now: dt.datetime, step_seconds: float = STEP_SECONDS,
          credentials: Mapping[str, str] | None = None, dags_folder: str | None = None,
          plugins_folder: str | None = None, in_process: bool = False) -> dict[str, Any]:
    """The execution's next state after one look at the deferred try's trigger, taken in a child with
    ``credentials`` (the DAG-code role's environment; none without) and the DAGs and plugins folders importable (a
    user's trigger class may live there: Airflow puts both on the triggerer's path). ``in_process`` looks here,
    still with only ``credentials`` for AWS: for tests whose trigger reads the test's own memory. A polled asset
    watcher's execution (``kind`` ``watch``) is checked by ``runtime.asset_watch``."""
    if state.get("kind") == WATCH_KIND:
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
