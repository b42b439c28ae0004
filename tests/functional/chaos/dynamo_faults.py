"""One fault injected at the Nth DynamoDB write, below the store, where the SDK and the network sit.

Three faults, as a Lambda meets them: ``before`` (the invocation dies before the write is sent), ``after`` (the
write lands, then the invocation dies) and ``lost_ack`` (the write lands, its response is lost and the SDK sends
the same request again, which now meets its own effect: usually a failed condition).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from unittest import mock

from botocore.client import BaseClient
from botocore.exceptions import ClientError

WRITE_OPERATIONS = frozenset({"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"})
MODES = ("before", "after", "lost_ack")


class SimulatedCrash(BaseException):
    """A Lambda that dies mid-invocation (BaseException: no `except Exception` in our code may swallow it)."""


class DynamoFaults:
    """Counts DynamoDB writes while installed; at write number ``at`` (1-based) injects ``mode`` once."""

    def __init__(self, mode: str | None = None, at: int = 0) -> None:
        assert mode is None or mode in MODES
        self.mode = mode
        self.at = at
        self.writes = 0
        self.fired: str | None = None  # the operation the fault hit
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def installed(self) -> Iterator[DynamoFaults]:
        original = BaseClient._make_api_call
        faults = self

        def call(client, operation, params):
            if client.meta.service_model.service_name != "dynamodb" or operation not in WRITE_OPERATIONS:
                return original(client, operation, params)
            with faults._lock:
                faults.writes += 1
                hit = faults.mode is not None and faults.writes == faults.at
            if not hit:
                return original(client, operation, params)
            faults.fired = operation
            if faults.mode == "before":
                raise SimulatedCrash(f"crash before write #{faults.at} ({operation})")
            original(client, operation, params)
            if faults.mode == "after":
                raise SimulatedCrash(f"crash after write #{faults.at} ({operation})")
            # Lost ack: botocore's retry of the identical request, whose response says it was resent.
            try:
                result = original(client, operation, params)
            except ClientError as exc:
                exc.response.setdefault("ResponseMetadata", {})["RetryAttempts"] = 1
                raise
            result.setdefault("ResponseMetadata", {})["RetryAttempts"] = 1
            return result

        with mock.patch.object(BaseClient, "_make_api_call", call):
            yield self
