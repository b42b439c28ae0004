"""X-Ray segment documents, their ids, and where they are sent.

A run's trace id and its segment's id are derived from the run itself (``run_trace_id``, ``run_segment_id``), as
each try's subsegment id is from its try id: a run is driven by many invocations started by different things (the
tick, a worker's mini scheduler, a deferral's resume from Step Functions), none of which carries a trace header
from the run's start, and any of them can name the run's trace from the run it holds. So a subsegment is sent as
soon as it ends, under a parent that may be sent later (X-Ray assembles a trace by ids).

Where documents go: ``DaemonLines`` sends each in one UDP datagram to the X-Ray daemon (on Lambda with active
tracing, at ``AWS_XRAY_DAEMON_ADDRESS``); local mode appends them to a file (``updraft.metrics.emf.FileLines``).
Nothing here imports the X-Ray SDK (~300 ms of a handler's cold start for what a datagram does).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import socket
from collections.abc import Mapping
from typing import Any

from updraft.metrics.emf import MetricLines

log = logging.getLogger(__name__)

DAEMON_HEADER = '{"format": "json", "version": 1}\n'


def _hex(text: str, length: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:length]


def run_trace_id(dag_id: str, run_id: str, queued_at: dt.datetime | None) -> str:
    """X-Ray's ``1-<epoch seconds, 8 hex>-<24 hex>``: the run's queue time and a digest of its identity."""
    epoch = int(queued_at.timestamp()) if queued_at is not None else 0
    return f"1-{epoch:08x}-{_hex(f'{dag_id}/{run_id}', 24)}"


def run_segment_id(dag_id: str, run_id: str) -> str:
    return _hex(f"run:{dag_id}/{run_id}", 16)


def span_id(*parts: str) -> str:
    """A subsegment's id from what names it uniquely (a try id and the span's name)."""
    return _hex("/".join(parts), 16)


def document(*, name: str, id: str, trace_id: str, start: dt.datetime, end: dt.datetime,
             parent_id: str | None = None, annotations: Mapping[str, str | int] | None = None) -> dict[str, Any]:
    """A segment (no ``parent_id``) or an independent subsegment of ``trace_id``."""
    doc: dict[str, Any] = {"name": name[:200], "id": id, "trace_id": trace_id,
                           "start_time": start.timestamp(), "end_time": max(end, start).timestamp()}
    if parent_id is not None:
        doc.update(type="subsegment", parent_id=parent_id)
    if annotations:
        doc["annotations"] = dict(annotations)
    return doc


class DaemonLines:
    """The X-Ray daemon at ``address`` (``host:port``): one document per datagram, with the daemon's header."""

    def __init__(self, address: str) -> None:
        host, _, port = address.rpartition(":")
        self.target = (host or "127.0.0.1", int(port))
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)

    def write(self, line: str) -> None:
        self._socket.sendto((DAEMON_HEADER + line).encode(), self.target)


class SegmentWriter:
    """Sends documents to ``lines`` (None: nowhere); best effort, as metrics are."""

    def __init__(self, lines: MetricLines | None) -> None:
        self.lines = lines

    def send(self, doc: Mapping[str, Any]) -> None:
        if self.lines is None:
            return
        try:
            self.lines.write(json.dumps(doc, separators=(",", ":")))
        except Exception:
            log.warning("trace segment %s not sent", doc.get("name"), exc_info=True)
