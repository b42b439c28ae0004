"""The receiving end of ``updraft.executors.local_compute``: a Unix socket answering Lambda invokes and RunTasks."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import tempfile
import threading
from collections.abc import Callable
from multiprocessing.connection import Client, Listener
from typing import Any

log = logging.getLogger(__name__)

Route = Callable[[dict[str, Any]], dict[str, Any]]


class ComputeServer:
    """Answers one JSON message per connection; ``routes`` maps an operation to what local mode does for it."""

    def __init__(self, routes: dict[str, Route]) -> None:
        self.routes = routes
        self._dir = tempfile.mkdtemp(prefix="updraft-compute-")  # 0700: only this user can connect
        self.address = os.path.join(self._dir, "compute.sock")
        # Listener's default backlog is 1: with dozens of workers invoking at once, the rest would be refused.
        self._listener = Listener(self.address, family="AF_UNIX", backlog=socket.SOMAXCONN)
        self._closing = False
        self._thread = threading.Thread(target=self._serve, name="local-compute", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._closing:
            try:
                conn = self._listener.accept()
            except OSError:
                break
            with conn:
                if self._closing:
                    break
                try:
                    message = json.loads(conn.recv_bytes())
                    route = self.routes.get(message.get("op"))
                    reply = route(message) if route else {"error": f"local mode does not play {message.get('op')!r}"}
                except Exception as exc:  # the caller gets one clear line; local mode keeps serving
                    log.exception("local compute call failed")
                    reply = {"error": f"{type(exc).__name__}: {exc}"}
                with contextlib.suppress(OSError):
                    conn.send_bytes(json.dumps(reply, default=str).encode())

    def close(self) -> None:
        self._closing = True
        # accept() does not wake up when another thread closes its socket: knock once.
        with contextlib.suppress(OSError):
            Client(self.address, family="AF_UNIX").close()
        self._thread.join(timeout=5)
        self._listener.close()
        with contextlib.suppress(OSError):
            os.rmdir(self._dir)
