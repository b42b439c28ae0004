"""Metering a try while its worker runs it: time, compute size, and every AWS request the worker process sends.

How requests are seen: :func:`install` adds two handlers to botocore's built-in handlers, which every botocore
session registers when it is created (boto3's, and pynamodb's own per thread), so every client made afterwards
reports its calls here without a request of its own. The worker handler installs them at import, before any
client exists. A handler does nothing unless a meter is running.

- DynamoDB: pynamodb already asks for ``ReturnConsumedCapacity=TOTAL`` on every data-plane call, so each response
  says the units it consumed, read here (free: a few bytes of the response). A response without them (a failed
  conditional write, an error) is charged as DynamoDB charges it, one unit (a write of an item up to 1 KB; an
  eventually consistent read is half a unit), counted in ``dynamodb_estimated_*_units``.
- S3: requests by price class (PUT/COPY/POST/LIST or the rest) and the bytes sent and received.
- CloudWatch Logs: ``PutLogEvents`` requests and the messages' bytes (what ingestion charges).
- Other services (Lambda invokes, ECS, Step Functions starts) are the next hop's business, not counted here.

Which try a request belongs to: the meter of the thread that sent it, else the one meter running in the process.
A worker Lambda, a Fargate task and local mode's worker processes run one try at a time, so every request of the
process while the try runs (its heartbeat, the store requests the try's child makes through the worker, the log
writes) is the try's. Where tries run in threads of one process (``dags test``), a request from a thread that is
no try's is left uncounted rather than given to the wrong try.

What the meter does not see: requests made after the try's end write (the mini scheduler's claims of the next
tasks, the releases of slots, the wait's start) cannot be on a record already written; ``updraft.cost`` counts
them as the run's scheduling overhead, estimated.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from updraft.executors.base import Dispatch
from updraft.model.deferrals import RESCHEDULE_KIND
from updraft.model.hitl import is_hitl
from updraft.model.records import TaskInstance
from updraft.model.states import TaskInstanceState
from updraft.model.usage import Usage, accumulated, architecture
from updraft.scheduling import TryResult
from updraft.sdk.compute import DEFAULT_FARGATE_CPU, DEFAULT_FARGATE_MEMORY, FARGATE, LAMBDA
from updraft.triggers.state_machine import transitions

if TYPE_CHECKING:
    from updraft.runtime.handoff import LambdaLimits

_LAMBDA_DEFAULT_MB = 1024  # the worker's memory when the try runs outside Lambda with no size known (dags test)
FARGATE_MINIMUM_S = 60.0  # Fargate bills each task for at least a minute
# One eventually consistent read is half a unit; anything else (a write, a strong read) at least one.
_READS = {"GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems"}
_S3_WRITE_CLASS = {"PutObject", "CopyObject", "PostObject", "ListObjects", "ListObjectsV2", "ListObjectVersions",
                   "CreateMultipartUpload", "UploadPart", "CompleteMultipartUpload", "ListMultipartUploads",
                   "ListParts", "ListBuckets"}

_lock = threading.Lock()
_running: list[UsageMeter] = []
_by_thread: dict[int, UsageMeter] = {}
_installed = False


class UsageMeter:
    """One try's run in this process: started with its compute, fed by the botocore handlers, read once at the
    end (:meth:`usage`)."""

    def __init__(self, try_number: int, *, executor: str, memory_mb: int | None = None, cpu: int | None = None,
                 clock: Any = time.monotonic) -> None:
        self.try_number = try_number
        self.executor = executor
        self.memory_mb = memory_mb
        self.cpu = cpu
        self.clock = clock
        self.started = clock()
        self.counts = Usage(try_number=try_number, architecture=architecture())
        self.lock = threading.Lock()
        self.s3_body = 0  # the body of the S3 upload being sent, counted when it is answered

    def usage(self, *, sfn_transitions: int = 0, end_write: bool = True) -> Usage:
        """What the run used so far, with the compute priced by its wall time; ``end_write``: plus the one write
        that is about to record it (not sent yet, so estimated: one unit)."""
        seconds = max(self.clock() - self.started, 0.0)
        with self.lock:
            usage = Usage(**{**self.counts.__dict__})
        usage.seconds = seconds
        usage.sfn_transitions += sfn_transitions
        if self.executor == FARGATE:
            billed = max(seconds, FARGATE_MINIMUM_S)
            usage.fargate_vcpu_s = (self.cpu or DEFAULT_FARGATE_CPU) / 1024 * billed
            usage.fargate_gb_s = (self.memory_mb or DEFAULT_FARGATE_MEMORY) / 1024 * billed
        else:
            usage.lambda_requests = 1
            usage.lambda_gb_s = (self.memory_mb or _LAMBDA_DEFAULT_MB) / 1024 * seconds
        if end_write:
            usage.dynamodb_requests += 1
            usage.dynamodb_write_units += 1
            usage.dynamodb_estimated_write_units += 1
        return usage

    # -- what the botocore handlers report ------------------------------------------------------------------------
    def dynamodb(self, operation: str, consumed: float | None) -> None:
        with self.lock:
            self.counts.dynamodb_requests += 1
            read = operation in _READS
            units = consumed if consumed is not None else 0.5 if read else 1.0
            if read:
                self.counts.dynamodb_read_units += units
                if consumed is None:
                    self.counts.dynamodb_estimated_read_units += units
            else:
                self.counts.dynamodb_write_units += units
                if consumed is None:
                    self.counts.dynamodb_estimated_write_units += units

    def s3(self, operation: str, sent: int, received: int) -> None:
        with self.lock:
            if operation in _S3_WRITE_CLASS:
                self.counts.s3_write_requests += 1
            else:
                self.counts.s3_read_requests += 1
            self.counts.s3_bytes += sent + received

    def logs(self, operation: str, message_bytes: int) -> None:
        with self.lock:
            self.counts.logs_requests += 1
            self.counts.logs_bytes += message_bytes


@contextlib.contextmanager
def metering(meter: UsageMeter) -> Iterator[UsageMeter]:
    """``meter`` counts the requests of this thread (and, while it is the only one, of the whole process)."""
    ident = threading.get_ident()
    with _lock:
        _running.append(meter)
        _by_thread[ident] = meter
    try:
        yield meter
    finally:
        with _lock:
            _running.remove(meter)
            if _by_thread.get(ident) is meter:
                del _by_thread[ident]


def _current() -> UsageMeter | None:
    with _lock:
        mine = _by_thread.get(threading.get_ident())
        if mine is not None:
            return mine
        return _running[0] if len(_running) == 1 else None


def _consumed(parsed: Any) -> float | None:
    """The units of a DynamoDB response's ``ConsumedCapacity`` (a list for batch and transaction calls)."""
    found = parsed.get("ConsumedCapacity") if isinstance(parsed, dict) else None
    if isinstance(found, dict):
        found = [found]
    if not found:
        return None
    return float(sum(c.get("CapacityUnits", 0) for c in found if isinstance(c, dict)))


def _body_size(body: Any) -> int:
    if isinstance(body, bytes | bytearray):
        return len(body)
    if isinstance(body, str):
        return len(body.encode("utf-8"))
    return 0


def _before(params: Any = None, model: Any = None, event_name: str = "", **_: Any) -> None:
    """``provide-client-params``: what a request carries (an S3 upload's body, log messages), before it is sent."""
    meter = _current()
    if meter is None or not isinstance(params, dict):
        return
    service = event_name.split(".")[1] if event_name.count(".") >= 2 else ""
    if service == "cloudwatch-logs" and event_name.endswith(".PutLogEvents"):
        meter.logs("PutLogEvents", sum(_body_size(e.get("message", "")) for e in params.get("logEvents", [])))
    elif service == "s3" and "Body" in params:
        meter.s3_body = _body_size(params["Body"])


def _after(http_response: Any = None, parsed: Any = None, model: Any = None, event_name: str = "",
           **_: Any) -> None:
    """``after-call``: one request answered (an error answer included: it is billed too)."""
    meter = _current()
    if meter is None or model is None:
        return
    service = event_name.split(".")[1] if event_name.count(".") >= 2 else ""
    operation = getattr(model, "name", "")
    if service == "dynamodb":
        meter.dynamodb(operation, _consumed(parsed))
    elif service == "s3":
        received = 0
        headers = getattr(http_response, "headers", None) or {}
        if operation == "GetObject":
            with contextlib.suppress(TypeError, ValueError):
                received = int(headers.get("content-length", 0))
        meter.s3(operation, meter.s3_body, received)
        meter.s3_body = 0


def install() -> None:
    """Register the handlers with every botocore session created from now on (idempotent)."""
    global _installed
    with _lock:
        if _installed:
            return
        from botocore import handlers

        handlers.BUILTIN_HANDLERS.append(("provide-client-params", _before))
        handlers.BUILTIN_HANDLERS.append(("after-call", _after))
        boto3 = sys.modules.get("boto3")
        default = getattr(boto3, "DEFAULT_SESSION", None)
        if default is not None:  # a session made before: the clients it makes from now on report too
            default.events.register("provide-client-params", _before)
            default.events.register("after-call", _after)
        _installed = True


def meter_for(dispatch: Dispatch, limits: LambdaLimits | None) -> UsageMeter:
    """The meter of ``dispatch``'s try: a Fargate task's size from its compute, a Lambda's memory from its
    context (local mode's worker processes have one too: they are priced as the Lambda they stand for)."""
    if dispatch.executor == FARGATE:
        return UsageMeter(dispatch.try_number, executor=FARGATE,
                          cpu=int(dispatch.compute.get("cpu") or DEFAULT_FARGATE_CPU),
                          memory_mb=int(dispatch.compute.get("memory") or DEFAULT_FARGATE_MEMORY))
    return UsageMeter(dispatch.try_number, executor=LAMBDA, memory_mb=limits.memory_mb if limits else None)


def with_usage(result: TryResult) -> TryResult:
    """``result`` carrying what this thread's try used so far (unchanged when no meter runs here), for its end
    write to record: the try's requests, its time, and the state transitions of the wait it starts."""
    with _lock:
        meter = _by_thread.get(threading.get_ident())
    if meter is None:
        return result
    return dataclasses.replace(result, usage=meter.usage(sfn_transitions=wait_transitions(result)))


def usage_so_far(started: TaskInstance) -> dict[str, Any] | None:
    """For a write that ends this run of the try other than its end (the hand-off to Fargate): what it used so far,
    added to what its record holds; None when no meter runs here."""
    with _lock:
        meter = _by_thread.get(threading.get_ident())
    return accumulated(started.usage, meter.usage()) if meter is not None else None


def wait_transitions(result: TryResult) -> int:
    """State transitions of the deferral state machine's execution the try's end starts (0: none)."""
    if result.state == TaskInstanceState.UP_FOR_RESCHEDULE:
        return transitions(RESCHEDULE_KIND)
    if result.state == TaskInstanceState.DEFERRED and result.deferral is not None:
        if is_hitl(result.deferral.to_record()) and result.deferral.timeout_at is None:
            return 0  # nothing waits: only a response resumes it
        return transitions(result.deferral.kind)
    return 0
