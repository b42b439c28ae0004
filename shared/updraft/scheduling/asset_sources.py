"""AWS events that become asset events (Airflow's ``AssetWatcher`` idea, without a triggerer).

* An S3 object created under the environment's asset-events prefix (an EventBridge "Object Created" event on
  AWS, an S3 notification record locally) (``UPDRAFT_ASSET_EVENTS_PREFIX``, default
  ``asset-events/``): every declared asset whose URI is the object's ``s3://bucket/key``, or a folder of it
  (``s3://bucket/asset-events/sales`` for ``.../sales/2024-01-01.csv``), gets an event whose ``extra`` names the
  object (bucket, key, size, etag). An object no declared asset covers is reported as unmatched.
* A message on the configured SQS queue: ``{"asset": "<name>" | "uri": "<uri>", "extra": {...}}`` names the
  asset; a message holding an S3 notification (a bucket notifying the queue) is handled as above.
* Airflow's own ``AssetWatcher`` (``updraft.triggers.aws_sources``): every message on a queue an asset's
  ``MessageQueueTrigger`` watches is an event of that asset, whatever the message holds, with Airflow's watcher
  extra ``{"from_trigger": True, "payload": <the SQS trigger's event>}``.

Each event's id comes from its source (the object's key and sequencer, the message id), so a redelivered
notification records nothing twice.
"""

from __future__ import annotations

import datetime as dt
import json
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from updraft.resources import ASSET_EVENTS_PREFIX
from updraft.scheduling.asset_events import record_asset_event
from updraft.store.assets import AssetRecord
from updraft.triggers.aws_sources import queue_name

if TYPE_CHECKING:
    from updraft.store.api import Store

__all__ = ["ASSET_EVENTS_PREFIX", "SourceOutcome", "covers", "handle_source_event"]


@dataclass
class SourceOutcome:
    recorded: list[str] = field(default_factory=list)  # "<asset name>: <source>"
    unmatched: list[str] = field(default_factory=list)  # sources no declared asset covers
    consumers: set[str] = field(default_factory=set)  # DAGs events were queued for


def covers(asset_uri: str, object_uri: str) -> bool:
    """Whether an upload at ``object_uri`` is an event of the asset at ``asset_uri`` (the object or its folder)."""
    return object_uri == asset_uri or object_uri.startswith(asset_uri.rstrip("/") + "/")


def handle_source_event(store: Store, event: Mapping[str, Any], *, bucket: str,
                        prefix: str = ASSET_EVENTS_PREFIX, now: dt.datetime) -> SourceOutcome:
    """Record the asset events an S3 notification or an SQS batch carries."""
    outcome = SourceOutcome()
    assets = store.list_assets()
    if event.get("source") == "aws.s3" and event.get("detail-type") == "Object Created":
        _s3_record(store, _from_eventbridge(event), assets, outcome, bucket=bucket, prefix=prefix, now=now)
        return outcome
    for record in event.get("Records") or []:
        if record.get("eventSource") == "aws:sqs":
            _sqs_record(store, record, assets, outcome, bucket=bucket, prefix=prefix, now=now)
        elif record.get("eventSource") == "aws:s3":
            _s3_record(store, record, assets, outcome, bucket=bucket, prefix=prefix, now=now)
        else:
            raise ValueError(f"not an S3 or SQS record: {record.get('eventSource')!r}")
    return outcome


def _s3_record(store: Store, record: Mapping[str, Any], assets: Iterable[AssetRecord], outcome: SourceOutcome,
               *, bucket: str, prefix: str, now: dt.datetime) -> None:
    if not str(record.get("eventName", "")).startswith("ObjectCreated"):
        return
    s3 = record["s3"]
    name = s3["bucket"]["name"]
    key = urllib.parse.unquote_plus(s3["object"]["key"])
    uri = f"s3://{name}/{key}"
    if name != bucket or not key.startswith(prefix):
        outcome.unmatched.append(uri)
        return
    extra = {"bucket": name, "key": key, "size": s3["object"].get("size"), "etag": s3["object"].get("eTag"),
             "source": "s3"}
    source = f"s3#{uri}#{s3['object'].get('sequencer') or s3['object'].get('versionId') or ''}"
    matched = [a for a in assets if covers(a.uri, uri)]
    if not matched:
        outcome.unmatched.append(uri)
    when = _parse_time(record.get("eventTime")) or now  # the notification's own time: the same when redelivered
    for asset in matched:
        _record(store, asset, source, extra, outcome, now=when)


def watcher_extra(payload: Any) -> dict[str, Any]:
    """An AssetWatcher's event extra, as Airflow's triggerer records it (``AssetManager.register_asset_change``)."""
    return {"from_trigger": True, "payload": payload}


def _sqs_record(store: Store, record: Mapping[str, Any], assets: list[AssetRecord], outcome: SourceOutcome,
                *, bucket: str, prefix: str, now: dt.datetime) -> None:
    queue = queue_name(str(record.get("eventSourceARN") or ""))
    watching = [a for a in assets if any(w.get("source") == "sqs" and w.get("queue") == queue for w in a.watchers)]
    sent = (record.get("attributes") or {}).get("SentTimestamp")
    when = dt.datetime.fromtimestamp(int(sent) / 1000, dt.UTC) if sent else now
    if watching:  # every message on a watched queue is an event of its watchers' assets, whatever it holds
        message = {"MessageId": record["messageId"], "Body": record["body"],
                   "Attributes": record.get("attributes") or {},
                   "MessageAttributes": record.get("messageAttributes") or {}}
        payload = {"status": "success", "message_batch": [message]}  # SqsSensorTrigger's event
        for asset in watching:
            _record(store, asset, f"sqs#{record['messageId']}", watcher_extra(payload), outcome, now=when)
        return
    body = json.loads(record["body"])
    if isinstance(body, dict) and "Records" in body:  # a bucket notifying the queue
        for inner in body["Records"]:
            _s3_record(store, inner, assets, outcome, bucket=bucket, prefix=prefix, now=now)
        return
    if not isinstance(body, dict) or not (body.get("asset") or body.get("uri")):
        raise ValueError('an SQS asset event is {"asset": "<name>"} or {"uri": "<uri>"}, with an optional "extra"')
    wanted = [a for a in assets if a.name == body.get("asset") or a.uri == body.get("uri")]
    source = f"sqs#{record['messageId']}"
    if not wanted:
        outcome.unmatched.append(str(body.get("asset") or body.get("uri")))
    for asset in wanted:
        _record(store, asset, source, {**dict(body.get("extra") or {}), "source": "sqs"}, outcome, now=when)


def _from_eventbridge(event: Mapping[str, Any]) -> dict[str, Any]:
    """An EventBridge "Object Created" event (how the stack delivers uploads) as an S3 notification record."""
    detail = event["detail"]
    obj = detail["object"]
    return {"eventSource": "aws:s3", "eventName": "ObjectCreated:" + str(detail.get("reason", "PutObject")),
            "eventTime": event.get("time"),
            "s3": {"bucket": {"name": detail["bucket"]["name"]},
                   "object": {"key": obj["key"], "size": obj.get("size"), "eTag": obj.get("etag"),
                              "sequencer": obj.get("sequencer"), "versionId": obj.get("version-id")}}}


def _parse_time(text: str | None) -> dt.datetime | None:
    if not text:
        return None
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def _record(store: Store, asset: AssetRecord, source: str, extra: dict[str, Any], outcome: SourceOutcome, *,
            now: dt.datetime) -> None:
    _, consumers = record_asset_event(store, name=asset.name, uri=asset.uri, group=asset.group, source=source,
                                      timestamp=now, extra=extra)
    outcome.recorded.append(f"{asset.name}: {source}")
    outcome.consumers |= consumers
