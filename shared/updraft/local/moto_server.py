"""The embedded AWS of local mode: moto in server mode, letting one request in at a time.

Server mode, because the worker processes and Fargate subprocesses of local mode must see the same AWS as the
scheduler. Serialized, because moto is not atomic under concurrent requests (its transactions snapshot and
restore whole tables, and even a single-item check-then-write can interleave): without the lock, concurrent
claims could both win here although they cannot on DynamoDB (``notes/aws-offline.md``, section 2a). Two cores
and the GIL mean moto gains nothing from parallel requests anyway.
"""

from __future__ import annotations

import logging
import threading
from typing import Any


class EmbeddedAwsServer:
    """A moto server on ``host:port`` (port 0: any free port) in a daemon thread of this process."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host = host
        self.port = port
        self._server: Any = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        # An IP address, not "localhost": botocore then addresses buckets by path, which moto's server routes.
        return f"http://{self.host}:{self.port}"

    def start(self) -> EmbeddedAwsServer:
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
        from werkzeug.serving import make_server

        from updraft.local import moto_speedups

        moto_speedups.apply()
        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one log line per request otherwise
        inner = DomainDispatcherApplication(create_backend_app)
        lock = threading.Lock()

        def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
            with lock:
                return list(inner(environ, start_response))

        self._server = make_server(self.host, self.port, app, threaded=True, request_handler=MotoRequestHandler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name="embedded-aws", daemon=True)
        self._thread.start()
        return self

    def reset(self) -> None:
        """Empty every service: moto keeps its state in module globals, shared by every server in a process."""
        import urllib.request

        urllib.request.urlopen(urllib.request.Request(f"{self.url}/moto-api/reset", method="POST"), timeout=10).close()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> EmbeddedAwsServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
