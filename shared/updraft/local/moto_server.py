"""The embedded AWS of local mode: moto in server mode, guarded so that each DynamoDB item stays atomic.

Server mode, because the worker processes and Fargate subprocesses of local mode must see the same AWS as the
scheduler. Guarded, because moto is not atomic under concurrent requests (a single-item check-then-write can
interleave; its transactions restored whole tables, now only their items: ``moto_transactions``): without a
guard, concurrent claims could both win here although they cannot on DynamoDB (``notes/aws-offline.md``,
section 2a). The guard is ``concurrent_moto.ConcurrentMoto``: by default one request at a time, as local mode
has always run (under the GIL on two cores, interleaving requests gains no CPU and measured slower under load);
with ``concurrent``, requests to different DynamoDB items go through at once and each item stays atomic. With a
``LatencySource`` every DynamoDB request also waits AWS's latency, and transactions meet DynamoDB's conflicts
(benchmarks only). Its connections stay open from one request to the next (``keep_alive_handler``), as AWS's do.
"""

from __future__ import annotations

import contextlib
import http.client
import io
import logging
import queue
import socket
import threading
import traceback
from collections.abc import Callable
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from updraft.local.concurrent_moto import DYNAMODB_TARGET, ConcurrentMoto

if TYPE_CHECKING:
    from updraft.local.latency import LatencySource


def _pooled_server(host: str, port: int, app: Any, handler: Any) -> Any:
    """werkzeug's threaded server, its connections served by threads that stay for the next one instead of a new
    thread each (a thread is started only when none is idle, so there are as many as connections were open at
    once). With ``keep_alive_handler``'s handler a thread serves its connection's requests until the client closes
    it; ``server_close`` shuts the open connections down, so their threads end with the server."""
    from werkzeug.serving import ThreadedWSGIServer

    class Pooled(ThreadedWSGIServer):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            self.requests: queue.SimpleQueue[tuple[Any, Any] | None] = queue.SimpleQueue()
            self.counts = threading.Lock()
            self.idle = 0
            self.started = 0
            self.open: set[socket.socket] = set()

        def process_request(self, request: Any, client_address: Any) -> None:
            with self.counts:
                self.open.add(request)
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
                    self.open.discard(taken[0])
                    self.idle += 1

        def server_close(self) -> None:
            super().server_close()
            with self.counts:
                for connection in self.open:
                    with contextlib.suppress(OSError):  # closed by its client meanwhile
                        connection.shutdown(socket.SHUT_RDWR)
                for _ in range(self.started):
                    self.requests.put(None)  # each thread ends after the requests already queued

    return Pooled(host, port, app, handler)


def keep_alive_handler(handler: type[Any]) -> type[Any]:
    """``handler`` (werkzeug's request handler, as moto's server subclasses it) answering request after request on
    one connection (HTTP/1.1's keep-alive), as AWS's endpoints do.

    werkzeug's development server closes every connection after its answer (Python's ``http.server`` cannot tell
    where an unread body ends), so each of a worker's requests to the embedded AWS opened a TCP connection, and the
    server drained each closing connection through a selector of its own: ~7% of a DynamoDB request's CPU on each
    side (botocore's client, the embedded AWS), which local mode's two cores run both of. Here a request's body
    is read whole by its ``Content-Length`` before the app runs, so the next request starts right after it, and
    the answer is sent in one write with the length of what the app returned (a HEAD's, 204's or 304's has no
    body and keeps the length the app gave). A request the handler cannot delimit that way (a chunked body, a
    malformed length, HTTP/1.0) is answered by werkzeug's own code, which closes its connection; so does one whose
    app raised (answered 500, logged as werkzeug logs it) and one whose client asked to close."""
    from werkzeug.exceptions import InternalServerError

    class KeepAlive(handler):  # type: ignore[misc,valid-type]
        def parse_request(self) -> bool:
            """``http.server``'s, with the headers of an HTTP/1.1 request read line by line rather than by the
            ``email`` package's parser (~6% of a DynamoDB request's CPU here), into the same ``HTTPMessage``: a
            header line is ``name: value``, a line starting with a space or tab continues the one before, and more
            than 100 lines or one over 64 KiB is refused as ``http.server`` refuses them. Any other
            request line (HTTP/1.0, a path starting ``//``, a malformed one) is parsed by ``http.server``."""
            words = self.raw_requestline.decode("iso-8859-1").rstrip("\r\n").split()
            if len(words) != 3 or words[2] != "HTTP/1.1" or words[1].startswith("//"):
                return bool(super().parse_request())
            self.command, self.path, self.request_version = words
            self.close_connection = False
            fields: list[list[str]] = []
            while (line := self.rfile.readline(_MAX_LINE + 1)) not in (b"\r\n", b"\n", b""):
                if len(line) > _MAX_LINE or len(fields) >= _MAX_HEADERS:
                    self.send_error(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "Header line too long or too many")
                    return False
                text = line.decode("iso-8859-1").rstrip("\r\n")
                if text[:1] in (" ", "\t") and fields:
                    fields[-1][1] = f"{fields[-1][1]} {text.strip()}"
                    continue
                name, colon, value = text.partition(":")
                if not colon or not name.strip():
                    self.send_error(HTTPStatus.BAD_REQUEST, f"Bad header line ({text[:100]!r})")
                    return False
                fields.append([name.strip(), value.strip()])
            headers = http.client.HTTPMessage()
            for name, value in fields:
                headers[name] = value
            self.headers = headers
            if headers.get("Connection", "").lower() == "close":
                self.close_connection = True
            if headers.get("Expect", "").lower() == "100-continue":
                return bool(self.handle_expect_100())
            return True

        def run_wsgi(self) -> None:
            length = self.headers.get("Content-Length") or "0"
            if (self.request_version != "HTTP/1.1" or not length.isdigit()
                    or "chunked" in self.headers.get("Transfer-Encoding", "").lower()):
                super().run_wsgi()  # werkzeug's answer, then the connection closes
                return
            body = self.rfile.read(int(length))  # a 100 Continue asked for went out with the headers read
            environ = self.environ = self.make_environ()
            environ["wsgi.input"] = io.BytesIO(body)
            try:
                status, headers, content = _answer(self.server.app, environ)
            except Exception:
                self.server.log("error", f"Error on request:\n{traceback.format_exc()}")
                self.close_connection = True
                status, headers, content = _answer(InternalServerError(), environ)
            self.wfile.write(_response(status, headers, content, method=environ["REQUEST_METHOD"],
                                       close=self.close_connection))

    return KeepAlive


def _answer(app: Callable[[dict[str, Any], Any], Any], environ: dict[str, Any]) -> tuple[str, list[tuple[str, str]],
                                                                                        bytes]:
    """What the WSGI ``app`` answers ``environ``: its status line, its headers and its whole body (what it wrote
    through ``start_response``'s ``write``, then what it returned)."""
    answered: list[Any] = []
    written: list[bytes] = []

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable[[bytes], None]:
        answered[:] = [status, headers]
        return written.append

    body = app(environ, start_response)
    try:
        written.extend(body)
    finally:
        if hasattr(body, "close"):
            body.close()
    return answered[0], answered[1], b"".join(written)


_MAX_LINE = 65536  # http.server's limits: a header line's length, and how many there may be
_MAX_HEADERS = 100

# Headers the keep-alive handler writes itself: a connection's framing is the server's, not the app's.
_FRAMING = frozenset({"connection", "content-length", "transfer-encoding", "keep-alive"})


def _response(status: str, headers: list[tuple[str, str]], content: bytes, *, method: str, close: bool) -> bytes:
    """An HTTP/1.1 answer in bytes, framed by ``Content-Length``: the body's, or for an answer without a body (a
    HEAD, 1xx, 204, 304) the length the app gave (a HEAD's is the length its GET would have)."""
    code = int(status.split(" ", 1)[0])
    bodiless = method == "HEAD" or code < 200 or code in (204, 304)
    lines = [f"HTTP/1.1 {status}\r\n"]
    lines.extend(f"{name}: {value}\r\n" for name, value in headers
                 if name.lower() not in _FRAMING or (bodiless and name.lower() == "content-length"))
    if not bodiless:
        lines.append(f"Content-Length: {len(content)}\r\n")
    if close:
        lines.append("Connection: close\r\n")
    lines.append("\r\n")
    head = "".join(lines).encode("latin-1")
    return head if bodiless else head + content


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
        self._server = _pooled_server(self.host, self.port, app, keep_alive_handler(MotoRequestHandler))
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
