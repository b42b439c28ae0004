"""The bucket's DAG file notifications -> the parser handler, as Lambda's SQS poller delivers them on AWS.

The bucket notifies local mode's queue of ``.py`` files created under the DAGs prefix; removals the folder sync
makes are sent to the same queue here (moto does not notify them). Each parse is reported as a line, and with
``--unpause`` a DAG seen for the first time is unpaused.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
from collections.abc import Callable
from typing import Any

from updraft.resources import ResourceNames


class DagEventPump:
    def __init__(self, *, services: Any, queue_url: str, names: ResourceNames,
                 parse: Callable[[dict[str, Any]], dict[str, Any]], say: Callable[[str], None],
                 stop: threading.Event, unpause_new_dags: bool) -> None:
        self.services = services
        self.queue_url = queue_url
        self.names = names
        self.parse = parse
        self.say = say
        self.stop = stop
        self.unpause_new_dags = unpause_new_dags
        self._seen_dags: set[str] = {meta.dag_id for meta in services.store.list_dags(include_inactive=True)}

    def notify_removed(self, key: str, version_id: str | None) -> None:
        """What the bucket would send for a removed object (the folder sync calls this)."""
        if not key.endswith(".py"):  # the bucket's notification filter
            return
        from updraft.local.dags_sync import object_removed_event

        event = object_removed_event(self.names.bucket, key, version_id, self.names.region)
        self.services.client("sqs").send_message(QueueUrl=self.queue_url, MessageBody=json.dumps(event))

    def pump(self) -> None:
        """Hand every queued S3 event to the parser handler, one at a time."""
        sqs = self.services.client("sqs")
        while not self.stop.is_set():
            messages = sqs.receive_message(QueueUrl=self.queue_url, MaxNumberOfMessages=10,
                                           WaitTimeSeconds=0).get("Messages")
            if not messages:
                return
            for message in messages:
                body = json.loads(message["Body"])
                if "Records" in body:  # not the s3:TestEvent S3 sends when the notification is set up
                    self._report(self.parse(body))
                sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"])

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

    def _unpause_new(self, dag_ids: list[str]) -> None:
        """Unpause a DAG the first time this system sees it; one the user paused since stays paused."""
        from updraft.scheduling.dag_registration import set_paused

        for dag_id in dag_ids:
            if dag_id not in self._seen_dags:
                self._seen_dags.add(dag_id)
                if set_paused(self.services.store, dag_id, False, now=dt.datetime.now(dt.UTC)):
                    self.say(f"unpaused {dag_id} (--unpause)")
