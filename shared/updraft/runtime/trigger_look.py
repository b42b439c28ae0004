"""The child's half of a look at a polling trigger (``runtime.trigger_check`` is the check function's half): rebuild
the trigger from its ``serialize()`` form, look once, and answer whether it fired, its event and its own interval.

This runs in a child of the task server with only the DAG-code role's credentials and the store through the worker's
proxy (``supervisor.TaskSupervisor.poll_trigger``; ``task_process``), so it imports nothing of the parent's side:
the process boundary is a security boundary.

- triggers with ``poll_once`` (the cross-DAG ``DagStateTrigger``/``WorkflowTrigger``, ``FileTrigger``): through
  ``runtime.cross_dag.poll_trigger``, a few reads of the store or a glob;
- triggers with ``poll_aws`` (``S3KeyTrigger``): one look with a boto3 session of the environment's DAG-code role
  (``dag_code_session``), never with the check function's own credentials, so a DAG waits only on what its own
  code could read;
- any other ``BaseTrigger`` (a user's trigger): its ``run()`` async generator is run for one step of at most
  ``STEP_SECONDS``; the first event it yields fires, a step that does not yield in time waits on.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import importlib
from collections.abc import Mapping
from typing import Any

from updraft.runtime.cross_dag import poll_trigger
from updraft.runtime.store_proxy import StoreProxy
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
