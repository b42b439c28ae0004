"""Runs tries in the worker Lambda: one asynchronous invoke per dispatch.

``InvocationType="Event"`` returns as soon as Lambda has queued the event, so a scheduler pass never waits for a
task, and Lambda's async queue absorbs bursts. The payload is the dispatch's identity and fencing token, and the
run as the claimer read it when small (``dispatch_run``): the worker reads everything else from the store, and a
duplicate delivery loses the ``try_id`` fence and runs nothing.

A failed invoke (throttled, function missing) is logged and the try stays queued: the scheduler's queued timeout
(``scheduling.decisions.backstops``) puts it back to scheduled, so raising here would only abort the rest of the pass.
"""

from __future__ import annotations

import collections
import json
import logging
import threading
from typing import TYPE_CHECKING

from updraft.executors.base import Dispatch

if TYPE_CHECKING:
    from mypy_boto3_lambda import LambdaClient

log = logging.getLogger(__name__)


class LambdaExecutor:
    # A claim pass sends its invokes from a few threads at once (``scheduling.pass_invokes``): boto3's client is
    # thread-safe and the failure record below is locked.
    dispatches_over_network = True

    def __init__(self, lambda_client: LambdaClient, function_name: str) -> None:
        self.lambda_client = lambda_client
        self.function_name = function_name
        self._lock = threading.Lock()
        # Refused invokes: a running count for metrics and the latest few for logs and tests (bounded, since a
        # warm scheduler container lives for hours).
        self.failures = 0
        self.failed: collections.deque[Dispatch] = collections.deque(maxlen=100)

    def dispatch(self, items: list[Dispatch]) -> None:
        for item in items:
            payload = json.dumps(item.lambda_payload(), separators=(",", ":")).encode()
            try:
                response = self.lambda_client.invoke(FunctionName=self.function_name, InvocationType="Event",
                                                     Payload=payload)
            except Exception:
                log.exception("invoking %s for %s try %s failed; the queued timeout will retry it",
                              self.function_name, item.key.label, item.try_number)
                self._fail(item)
                continue
            if response.get("StatusCode") != 202:
                log.error("invoking %s for %s try %s returned status %s", self.function_name, item.key.label,
                          item.try_number, response.get("StatusCode"))
                self._fail(item)

    def _fail(self, item: Dispatch) -> None:
        with self._lock:
            self.failures += 1
            self.failed.append(item)
