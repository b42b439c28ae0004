"""The bucket's DAG file notifications -> the parser handler, as Lambda's SQS poller delivers them on AWS.

The bucket notifies local mode's queue of ``.py`` files created under the DAGs prefix; removals the folder sync
makes are sent to the same queue here (moto does not notify them). Each parse is reported as a line, and with
``--unpause`` a DAG seen for the first time is unpaused.

Messages are handled concurrently (``PARSER_CONCURRENCY`` at a time, as Lambda runs concurrent parser
containers), so a file that hangs at import delays no file uploaded after it. A message stays in the queue until
its parse is done; one redelivered while still being handled is not handled twice. A message whose handling
raised (a file's handling failed with attempts left) comes back after ``RETRY_SECONDS`` times its deliveries, at
most ``UPDRAFT_PARSE_ATTEMPTS`` deliveries in all, as Lambda retries an asynchronous event.

The queue lives in the embedded AWS's memory, which ``--state-dir`` does not keep, so at start the files the store
has not caught up with (never parsed, changed since, or whose handling failed) are queued again
(:meth:`DagEventPump.catch_up`): a file is never left unparsed by a stop or a crash.
"""

from __future__ import annotations

import concurrent.futures
import datetime as dt
import json
import threading
from collections.abc import Callable
from typing import Any

from updraft.local.dags_sync import object_removed_event
from updraft.parsing.s3 import relative_key
from updraft.parsing.timetable_horizons import reparse_event
from updraft.resources import ASSET_EVENTS_PREFIX, ResourceNames
from updraft.scheduling.commands import set_paused

PARSER_CONCURRENCY = 4
RETRY_SECONDS = 1  # a failed message's next delivery, times its deliveries so far


class DagEventPump:
    def __init__(self, *, services: Any, queue_url: str, names: ResourceNames,
                 parse: Callable[[dict[str, Any]], dict[str, Any]], say: Callable[[str], None],
                 stop: threading.Event, unpause_new_dags: bool,
                 asset_events: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> None:
        self.services = services
        self.asset_events = asset_events
        self.queue_url = queue_url
        self.names = names
        self.parse = parse
        self.say = say
        self.stop = stop
        self.unpause_new_dags = unpause_new_dags
        self._seen_dags: set[str] = {meta.dag_id for meta in services.store.list_dags(include_inactive=True)}
        self._seen_lock = threading.Lock()
        self._pool = concurrent.futures.ThreadPoolExecutor(PARSER_CONCURRENCY, thread_name_prefix="parser")
        self._in_flight: set[str] = set()  # message ids being handled
        self._in_flight_lock = threading.Lock()

    def notify_removed(self, key: str, version_id: str | None) -> None:
        """What the bucket would send for a removed object (the folder sync calls this)."""
        if not key.endswith(".py"):  # the bucket's notification filter
            return

        event = object_removed_event(self.names.bucket, key, version_id, self.names.region)
        self.services.client("sqs").send_message(QueueUrl=self.queue_url, MessageBody=json.dumps(event))

    def pump(self) -> bool:
        """Hand every queued S3 event to the parser handler, up to ``PARSER_CONCURRENCY`` at once; whether there
        was anything to do (a message received, or parses still under way)."""
        sqs = self.services.client("sqs")
        received = False
        while not self.stop.is_set():
            with self._in_flight_lock:
                room = PARSER_CONCURRENCY - len(self._in_flight)
            if room <= 0:
                return True
            messages = sqs.receive_message(QueueUrl=self.queue_url, MaxNumberOfMessages=min(10, room),
                                           WaitTimeSeconds=0,
                                           MessageSystemAttributeNames=["ApproximateReceiveCount"]).get("Messages")
            if not messages:
                with self._in_flight_lock:
                    return received or bool(self._in_flight)
            received = True
            for message in messages:
                with self._in_flight_lock:
                    if message["MessageId"] in self._in_flight:
                        continue  # redelivered while its parse is still going
                    self._in_flight.add(message["MessageId"])
                self._pool.submit(self._handle, message)
        return received

    def close(self) -> None:
        """Wait for the parses under way; queued ones stay in the queue (local mode's stop)."""
        self._pool.shutdown(wait=True, cancel_futures=True)

    def _handle(self, message: dict[str, Any]) -> None:
        try:
            body = json.loads(message["Body"])
            if "Records" in body and self.asset_events is not None and _under_asset_prefix(body):
                self._report_assets(self.asset_events(body))
            elif "Records" in body:  # not the s3:TestEvent S3 sends when the notification is set up
                self._report(self.parse(body))
            self.services.client("sqs").delete_message(QueueUrl=self.queue_url,
                                                       ReceiptHandle=message["ReceiptHandle"])
        except Exception as exc:
            self._failed(message, exc)
        finally:
            with self._in_flight_lock:
                self._in_flight.discard(message["MessageId"])

    def _failed(self, message: dict[str, Any], exc: Exception) -> None:
        """Deliver the message again soon, or drop it after the configured attempts (Lambda's DLQ, here a line)."""
        sqs = self.services.client("sqs")
        deliveries = int(message.get("Attributes", {}).get("ApproximateReceiveCount", 1))
        if deliveries >= self.services.config.parse_attempts:
            sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"])
            self.say(f"[ERROR] handling an S3 event failed {deliveries} times ({type(exc).__name__}: {exc}); "
                     "given up")
            return
        sqs.change_message_visibility(QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"],
                                      VisibilityTimeout=RETRY_SECONDS * deliveries)
        self.say(f"[ERROR] handling an S3 event failed ({type(exc).__name__}: {exc}); it will be retried")

    def catch_up(self, bucket: str, prefix: str) -> list[str]:
        """Queue a parse of every DAG file of the bucket the store has not caught up with; returns their keys.

        A file needs one when it has no record (a sibling module with no DAGs has none: parsing it again costs a
        fork), when its content is not the one its record was parsed from, or when its last handling failed."""
        import hashlib

        s3, sqs, store = self.services.client("s3"), self.services.client("sqs"), self.services.store
        queued = []
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            for obj in page.get("Contents", []):
                relative = relative_key(obj["Key"], prefix)
                if relative is None or not relative.endswith(".py"):
                    continue
                record = store.get_file_record(relative)
                if record is not None and not record.parse_failures:
                    body = s3.get_object(Bucket=bucket, Key=obj["Key"])["Body"].read()
                    if hashlib.sha256(body).hexdigest() == record.file_hash:
                        continue
                sqs.send_message(QueueUrl=self.queue_url,
                                 MessageBody=json.dumps(reparse_event(bucket, prefix, relative)))
                queued.append(obj["Key"])
        return queued

    def _report(self, result: dict[str, Any]) -> None:
        for key, entry in result.get("parsed", {}).items():
            if self.unpause_new_dags:
                self._unpause_new(entry.get("dag_ids") or [])
            errors = entry.get("import_errors") or []
            dags = ", ".join(entry.get("dag_ids") or []) or "no DAGs"
            self.say(f"parsed {key}: {dags}" + (f"; {len(errors)} import error(s)" if errors else ""))
            for error in errors:
                message = str(error.get("message") if isinstance(error, dict) else error).splitlines()[0]
                self.say(f"  import error: {message}")
        for key in result.get("removed", []):
            self.say(f"{key} removed: its DAGs are deactivated")
        for key, reason in result.get("rejected", {}).items():
            self.say(f"[WARN] rejected {key}: {reason}")
        for key, error in result.get("failed", {}).items():
            self.say(f"[ERROR] {key} could not be handled: {error}")

    def _report_assets(self, result: dict[str, Any]) -> None:
        for line in result.get("recorded", []):
            self.say(f"asset event {line}")
        for run in result.get("runs_created", []):
            self.say(f"asset-triggered run {run}")
        for uri in result.get("unmatched", []):
            self.say(f"[WARN] {uri} is under {ASSET_EVENTS_PREFIX} but no declared asset covers it")

    def _unpause_new(self, dag_ids: list[str]) -> None:
        """Unpause a DAG the first time this system sees it; one the user paused since stays paused."""
        for dag_id in dag_ids:
            with self._seen_lock:
                new = dag_id not in self._seen_dags
                self._seen_dags.add(dag_id)
            if new and set_paused(self.services.store, dag_id, False, now=dt.datetime.now(dt.UTC)):
                self.say(f"unpaused {dag_id} (--unpause)")


def _under_asset_prefix(body: dict[str, Any]) -> bool:
    """An S3 notification of objects under the asset-events prefix (the bucket's second notification rule)."""
    from urllib.parse import unquote_plus

    keys = [unquote_plus(r.get("s3", {}).get("object", {}).get("key", "")) for r in body["Records"]]
    return bool(keys) and all(k.startswith(ASSET_EVENTS_PREFIX) for k in keys)
