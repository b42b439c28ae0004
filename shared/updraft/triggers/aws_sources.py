"""The event triggers an ``AssetWatcher`` may hold in Updraft, and what each watches: those whose events AWS already
delivers to the environment's asset-events Lambda, so nothing has to poll (``updraft.scheduling.asset_sources``),
and the others, which are polled.

``MessageQueueTrigger`` on an SQS queue (Airflow 3's common-messaging provider, the trigger Airflow documents for
event-driven scheduling): every message on the environment's asset-events queue (``asset_events_queue_arn`` in
infra/config.py) is an event of the assets watching that queue (matched by the queue's name), with Airflow's
watcher extra. Uploads need no watcher: an asset whose URI is under ``s3://<bucket>/asset-events/`` gets an event
per object created there.

Any other event trigger (``FileDeleteTrigger``, a user's ``BaseEventTrigger``) is polled, one look per check, by a Step
Functions execution per watcher (``updraft.scheduling.asset_watchers``). A watch Updraft could never be told about
(a queue that is not SQS, a filter Updraft does not apply, a trigger that is not an event trigger) is refused when
the DAG file is parsed, naming it. Which queue the environment has is not visible to
DAG-file code (the parse child runs without Updraft's settings), so a watch on another SQS queue is accepted and
never fires; the asset-events Lambda only ever receives its own queue's messages.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import AsyncIterator
from typing import Any

from updraft.sdk.exceptions import UnsupportedFeatureError
from updraft.triggers.base import BaseEventTrigger, BaseTrigger, TriggerEvent

__all__ = ["MessageQueueTrigger", "queue_name", "watch_of"]

# Arguments of the SQS trigger that only tune its polling (Lambda's event source mapping does that here).
_POLLING = frozenset({"aws_conn_id", "region_name", "max_messages", "num_batches", "wait_time_seconds",
                      "waiter_delay", "verify", "botocore_config", "visibility_timeout", "delete_message_on_reception"})


def queue_name(queue: str) -> str:
    """The queue's name from its URL (``https://sqs.<region>.amazonaws.com/<account>/<name>``), ARN or name."""
    if queue.startswith(("https://", "http://")):
        return urllib.parse.urlsplit(queue).path.rstrip("/").rsplit("/", 1)[-1]
    if queue.startswith("arn:"):
        return queue.rsplit(":", 1)[-1]
    return queue


def _is_sqs_url(queue: str | None) -> bool:
    return bool(queue) and urllib.parse.urlsplit(str(queue)).netloc.startswith("sqs.")


class MessageQueueTrigger(BaseEventTrigger):
    """``airflow.providers.common.messaging.triggers.msg_queue.MessageQueueTrigger``, for SQS queues only."""

    def __init__(self, *, queue: str | None = None, scheme: str | None = None, **kwargs: Any) -> None:
        super().__init__()
        target = kwargs.pop("sqs_queue", None) or queue
        if not (scheme == "sqs" or (scheme is None and _is_sqs_url(target))):
            raise UnsupportedFeatureError(
                f"MessageQueueTrigger(scheme={scheme!r}, queue={queue!r}) in an AssetWatcher",
                "only SQS queues are delivered to Updraft (scheme='sqs', sqs_queue=<the environment's asset-events "
                "queue>)")
        if not target:
            raise ValueError("MessageQueueTrigger(scheme='sqs') needs sqs_queue")
        if kwargs.get("delete_message_on_reception") is False:
            raise UnsupportedFeatureError("MessageQueueTrigger(delete_message_on_reception=False) in an AssetWatcher",
                                          "Lambda deletes every message it delivers")
        unhonoured = sorted(k for k, v in kwargs.items() if k not in _POLLING and v is not None)
        if unhonoured:
            raise UnsupportedFeatureError(f"MessageQueueTrigger({', '.join(unhonoured)}=...) in an AssetWatcher",
                                          "every message on the queue becomes an event; filter in the consuming DAG")
        self._kwargs = {"scheme": scheme, "queue": queue, "sqs_queue": target, **kwargs}
        self.queue = queue_name(str(target))

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return "airflow.providers.common.messaging.triggers.msg_queue.MessageQueueTrigger", dict(self._kwargs)

    def watch(self) -> dict[str, Any]:
        return {"source": "sqs", "queue": self.queue}

    async def run(self) -> AsyncIterator[TriggerEvent]:
        raise RuntimeError("MessageQueueTrigger does not poll in Updraft: Lambda delivers the queue's messages to the "
                           "asset-events function")
        yield TriggerEvent(None)  # pragma: no cover - makes this an async generator, as Airflow's run() is


def watch_of(trigger: Any) -> dict[str, Any]:
    """What an AssetWatcher's trigger watches: an SQS queue AWS delivers, or a trigger Updraft polls for as long as a
    DAG scheduled on the asset is unpaused (any other event trigger: ``updraft.scheduling.asset_watchers``)."""
    if not isinstance(trigger, BaseTrigger):
        raise ValueError("Asset watcher trigger must inherit BaseEventTrigger")  # Airflow's words
    if isinstance(trigger, MessageQueueTrigger):
        return trigger.watch()
    if not isinstance(trigger, BaseEventTrigger):
        name = f"{type(trigger).__module__}.{type(trigger).__name__}"
        raise UnsupportedFeatureError(
            f"{name} in an AssetWatcher", "an asset watcher's trigger must be an event trigger (BaseEventTrigger: "
            "FileDeleteTrigger, DirectoryFileDeleteTrigger, MessageQueueTrigger on SQS, or your own), as in Airflow")
    classpath, kwargs = trigger.serialize()
    try:  # kept with the asset and handed to each check: JSON, as the store and Step Functions keep it
        plain = json.loads(json.dumps(dict(kwargs)))
    except (TypeError, ValueError):
        raise UnsupportedFeatureError(f"{classpath} with keyword arguments that are not JSON in an AssetWatcher",
                                      "a polled watcher's trigger is rebuilt from JSON keyword arguments "
                                      "(strings, numbers, lists, mappings)") from None
    return {"source": "poll", "classpath": classpath, "kwargs": plain}
