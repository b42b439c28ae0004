"""The embedded AWS of local mode: moto in server mode, guarded so that each DynamoDB item stays atomic.

Server mode, because the worker processes and Fargate subprocesses of local mode must see the same AWS as the
scheduler. Guarded, because moto is not atomic under concurrent requests (a single-item check-then-write can
interleave; its transactions restored whole tables, now only their items: ``moto_transactions``): without a
guard, concurrent claims could both win here although they cannot on DynamoDB (``notes/aws-offline.md``,
section 2a). The guard is ``concurrent_moto.ConcurrentMoto``: by default one request at a time, as local mode
has always run (under the GIL on two cores, interleaving requests gains no CPU and measured slower under load);
with ``concurrent``, requests to different DynamoDB items go through at once and each item stays atomic. With a
``LatencySource`` every DynamoDB request also waits AWS's latency, and transactions meet DynamoDB's conflicts
(benchmarks only).
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from updraft.local.concurrent_moto import DYNAMODB_TARGET, ConcurrentMoto

if TYPE_CHECKING:
    from updraft.local.latency import LatencySource


def _pooled_server(host: str, port: int, app: Any, handler: Any) -> Any:
    """werkzeug's threaded server, its requests served by threads that stay for the next one instead of a new
    thread each: werkzeug closes every connection after its answer, so each request was a thread started (~7% of a
    DynamoDB request's CPU in this one interpreter, which local mode's workers wait on). A thread is started only
    when none is idle, so there are as many as requests were served at once; ``stop`` ends them."""
    from werkzeug.serving import ThreadedWSGIServer

    class Pooled(ThreadedWSGIServer):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            self.requests: queue.SimpleQueue[tuple[Any, Any] | None] = queue.SimpleQueue()
            self.counts = threading.Lock()
            self.idle = 0
            self.started = 0

        def process_request(self, request: Any, client_address: Any) -> None:
            with self.counts:
                start = self.idle == 0
                if start:
                    self.started += 1
                else:
                    self.idle -= 1
            self.requests.put((request, client_address))
            if start:
                threading.Thread(target=self.serve_requests, name="embedded-aws-request", daemon=True).start()

        def serve_requests(self) -> None:
            while (taken := self.requests.get()) is not None:
                self.process_request_thread(*taken)
                with self.counts:
                    self.idle += 1

        def server_close(self) -> None:
            super().server_close()
            with self.counts:
                for _ in range(self.started):
                    self.requests.put(None)  # each thread ends after the requests already queued

    return Pooled(host, port, app, handler)


def dynamodb_direct(app: Callable[[dict[str, Any], Any], Any]) -> Callable[[dict[str, Any], Any], Any]:
    """moto's server ``app``, with DynamoDB's requests handed to moto's DynamoDB handler at once, as the view its
    Flask app routes them to calls it (``moto.core.utils.convert_to_flask_response``), without finding the service
    from the request's signature and routing it through a Flask app (~0.3 ms of a request's ~1.6 ms of CPU: local
    mode's embedded AWS is one interpreter, which its workers wait on). Every other request goes to ``app``."""
    from botocore.exceptions import ClientError
    from moto.dynamodb.responses import DynamoHandler
    from moto.moto_api import recorder
    from moto.moto_server.werkzeug_app import BackendRequest
    from werkzeug.wrappers import Response

    def direct(environ: dict[str, Any], start_response: Any) -> Any:
        if not environ.get("HTTP_X_AMZ_TARGET", "").startswith(DYNAMODB_TARGET):
            return app(environ, start_response)
        environ.setdefault("CONTENT_LENGTH", "0")
        request = BackendRequest(environ)
        recorder._record_request(request)
        try:
            result = DynamoHandler.dispatch(request, request.raw_url, dict(request.headers))
        except ClientError as exc:
            result = 400, {}, exc.response["Error"]["Message"]
        status, headers, content = result if len(result) == 3 else (200, {}, result)
        return Response(response=content, status=status, headers=headers)(environ, start_response)

    return direct


class EmbeddedAwsServer:
    """A moto server on ``host:port`` (port 0: any free port) in a daemon thread of this process; with ``lock``,
    every request holds it (serialized with in-process moto requests that hold it too). ``conflicts``: emulate
    DynamoDB's transaction conflicts (None: when the latency profile has a transaction window)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, concurrent: bool = False,
                 latency: LatencySource | None = None, lock: contextlib.AbstractContextManager[Any] | None = None,
                 conflicts: bool | None = None) -> None:
        self.host = host
        self.port = port
        if concurrent and lock is not None:
            raise ValueError("a concurrent server takes per-item locks, not one shared lock")
        self.concurrent = concurrent
        self.latency = latency
        self.lock = lock
        self.conflicts = conflicts
        self._server: Any = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        # An IP address, not "localhost": botocore then addresses buckets by path, which moto's server routes.
        return f"http://{self.host}:{self.port}"

    def start(self) -> EmbeddedAwsServer:
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one log line per request otherwise
        self.guard = ConcurrentMoto(self.latency, serialize=not self.concurrent, lock=self.lock,
                                    conflicts=self.conflicts)
        app = self.guard.wsgi(dynamodb_direct(DomainDispatcherApplication(create_backend_app)))
        self._server = _pooled_server(self.host, self.port, app, MotoRequestHandler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name="embedded-aws", daemon=True)
        self._thread.start()
        return self

    @property
    def app(self) -> Callable[[dict[str, Any], Any], Any]:
        """The WSGI app served now (wrapped by ``wrap``), to call without HTTP (a benchmark's replay)."""
        if self._server is None:
            raise RuntimeError("the embedded AWS is not started")
        return self._server.app  # type: ignore[no-any-return]

    def wrap(self, middleware: Callable[[Any], Any]) -> None:
        """Serve ``middleware(app)`` in place of the app served now (a benchmark's request census); started only."""
        if self._server is None:
            raise RuntimeError("the embedded AWS is not started")
        self._server.app = middleware(self._server.app)

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
