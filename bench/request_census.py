"""A census of the requests the embedded AWS serves: how many of each operation, and the CPU its server spent.

Wrapped around the embedded AWS's WSGI app (``EmbeddedAwsServer.wrap``), it names each request by the service of
its SigV4 credential scope and, for JSON protocols, the operation of its ``X-Amz-Target`` (``dynamodb
UpdateItem``, ``sqs ReceiveMessage``); a REST request (S3) is named by its method (``s3 PUT``). The CPU is the
serving thread's (``time.thread_time``) from the request's arrival to its answer: moto's work, not the HTTP
parsing around it, nor the caller's botocore. ``take`` returns what was counted since the last ``take``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

WsgiApp = Callable[[dict[str, Any], Any], Iterable[bytes]]


@dataclass
class Tally:
    """Requests of one operation and the serving CPU they took, in seconds."""

    count: int = 0
    cpu_s: float = 0.0


def request_name(environ: dict[str, Any]) -> str:
    """``<service> <operation>`` of a request as botocore signs and sends it (``unsigned <METHOD>`` if unsigned)."""
    service = "unsigned"
    authorization = environ.get("HTTP_AUTHORIZATION", "")
    if "Credential=" in authorization:
        scope = authorization.split("Credential=", 1)[1].split(",", 1)[0].split("/")
        if len(scope) >= 4:
            service = scope[3]
    target = environ.get("HTTP_X_AMZ_TARGET", "")
    operation = target.rsplit(".", 1)[-1] if target else environ.get("REQUEST_METHOD", "")
    return f"{service} {operation}"


class RequestCensus:
    """Counts requests by name (:func:`request_name`) with their serving CPU; safe under a threaded server."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tallies: dict[str, Tally] = {}

    def wrap(self, app: WsgiApp) -> WsgiApp:
        def counted(environ: dict[str, Any], start_response: Any) -> list[bytes]:
            name = request_name(environ)
            began = time.thread_time()
            try:
                return list(app(environ, start_response))
            finally:
                spent = time.thread_time() - began
                with self._lock:
                    tally = self._tallies.setdefault(name, Tally())
                    tally.count += 1
                    tally.cpu_s += spent

        return counted

    def take(self) -> dict[str, Tally]:
        """What was counted since the last call, by name, the most frequent first."""
        with self._lock:
            taken, self._tallies = self._tallies, {}
        return dict(sorted(taken.items(), key=lambda item: (-item[1].count, item[0])))


def render(tallies: dict[str, Tally], tasks: int, *, top: int = 8) -> str:
    """A markdown table per operation: requests per task and serving CPU per request, the total first."""
    count = sum(t.count for t in tallies.values())
    cpu = sum(t.cpu_s for t in tallies.values())
    lines = ["| request | per task | CPU per request | CPU per task |", "|---|---|---|---|",
             f"| all | {count / tasks:.1f} | {_ms(cpu, count)} | {cpu * 1000 / tasks:.1f} ms |"]
    for name, tally in list(tallies.items())[:top]:
        lines.append(f"| {name} | {tally.count / tasks:.1f} | {_ms(tally.cpu_s, tally.count)} | "
                     f"{tally.cpu_s * 1000 / tasks:.1f} ms |")
    return "\n".join(lines)


def _ms(seconds: float, count: int) -> str:
    return f"{seconds * 1000 / count:.1f} ms" if count else "-"
