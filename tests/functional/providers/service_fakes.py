"""Local stand-ins for the services the real providers talk to, for the end-to-end provider tests.

Each fake is a threaded server on 127.0.0.1 at a free port, started by a context manager and stopped when it
exits; every request it answers is recorded (``.requests``) so a test asserts what the provider really sent.
- ``http_server(respond)``: plain HTTP, ``respond(request) -> Reply``.
- ``https_proxy(respond, hosts)``: an HTTPS proxy (``HTTPS_PROXY``) that answers CONNECTs to ``hosts`` itself,
  over TLS with a certificate of a test CA (``ca_file`` for ``REQUESTS_CA_BUNDLE``): for SDKs whose URL is fixed
  to a public host (Snowflake's ``https://<account>.snowflakecomputing.com``), as a corporate proxy would.
- ``smtp_server()``: the SMTP commands smtplib sends (EHLO/HELO, MAIL, RCPT, DATA, QUIT), mails recorded.
- ``databricks_jobs_api()`` / ``snowflake_sql_api()``: the REST APIs those operators call, as far as they use them.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import http.server
import json
import socketserver
import ssl
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import Message
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass(frozen=True)
class Request:
    method: str
    path: str  # without the query
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: Any = None  # bytes or str as is; anything else as JSON
    headers: dict[str, str] = field(default_factory=dict)

    def encoded(self) -> tuple[bytes, str]:
        if isinstance(self.body, bytes):
            return self.body, "application/octet-stream"
        if isinstance(self.body, str):
            return self.body.encode(), "text/plain"
        return json.dumps(self.body).encode(), "application/json"


Respond = Callable[[Request], Reply]


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        parts = urlsplit(self.path)
        request = Request(self.command, parts.path, parse_qs(parts.query), dict(self.headers.items()),
                          self.rfile.read(length))
        with self.server.lock:
            self.server.requests.append(request)
        try:
            reply = self.server.respond(request)
        except Exception as exc:  # a fake's bug shows in the task log as a 500, and here
            reply = Reply(500, f"fake server error: {exc!r}")
        body, content_type = reply.encoded()
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.headers.get("Content-Type", content_type))
        self.send_header("Content-Length", str(len(body)))
        for name, value in reply.headers.items():
            if name != "Content-Type":
                self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _answer

    def do_CONNECT(self) -> None:
        """A tunnel to a host this proxy stands for: TLS ends here and the same handler answers inside it."""
        host = self.path.rsplit(":", 1)[0]
        context = self.server.tls_for(host)
        if context is None:
            self.send_error(502, f"this test proxy reaches no other host ({host})")
            return
        self.send_response(200, "Connection established")
        self.end_headers()
        tls = context.wrap_socket(self.connection, server_side=True)
        _Handler(tls, self.client_address, self.server)
        self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the recorded requests say it all
        pass


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, respond: Respond, tls_for: Callable[[str], ssl.SSLContext | None] = lambda _host: None):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.respond = respond
        self.tls_for = tls_for
        self.requests: list[Request] = []
        self.lock = threading.Lock()


@dataclass
class Fake:
    """A running fake: where it listens and what it was asked."""

    server: Any
    ca_file: str | None = None

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def requests(self) -> list[Request]:
        with self.server.lock:
            return list(self.server.requests)

    def paths(self, method: str | None = None) -> list[str]:
        return [r.path for r in self.requests if method in (None, r.method)]


@contextlib.contextmanager
def _serving(server: Any, ca_file: str | None = None) -> Iterator[Fake]:
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield Fake(server, ca_file)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def http_server(respond: Respond) -> contextlib.AbstractContextManager[Fake]:
    return _serving(_Server(respond))


# -- HTTPS through a proxy, with a test CA ---------------------------------------------------------------------
def _certificates(folder: Path, host_suffix: str) -> tuple[Path, Path, Path]:
    """A CA and a certificate for ``*.<host_suffix>`` it signs: (ca.pem, cert.pem, key.pem) in ``folder``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = dt.datetime.now(dt.UTC)

    def name(common: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])

    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = (x509.CertificateBuilder().subject_name(name("updraft test CA")).issuer_name(name("updraft test CA"))
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - dt.timedelta(hours=1)).not_valid_after(now + dt.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                       content_commitment=False, key_encipherment=False, data_encipherment=False,
                                       key_agreement=False, encipher_only=False, decipher_only=False),
                         critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    cert = (x509.CertificateBuilder().subject_name(name(f"*.{host_suffix}")).issuer_name(ca.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(hours=1)).not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(f"*.{host_suffix}")]), critical=False)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    paths = folder / "ca.pem", folder / "cert.pem", folder / "key.pem"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return paths


@contextlib.contextmanager
def https_proxy(respond: Respond, host_suffix: str) -> Iterator[Fake]:
    """An HTTPS proxy answering every ``*.<host_suffix>`` itself (``Fake.url`` is the proxy, ``ca_file`` its CA)."""
    with tempfile.TemporaryDirectory(prefix="updraft-test-ca-") as folder:
        ca_file, cert_file, key_file = _certificates(Path(folder), host_suffix)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert_file, key_file)

        def tls_for(host: str) -> ssl.SSLContext | None:
            return context if host.endswith(f".{host_suffix}") else None

        with _serving(_Server(respond, tls_for), str(ca_file)) as fake:
            yield fake


# -- SMTP ------------------------------------------------------------------------------------------------------
class _SmtpHandler(socketserver.StreamRequestHandler):
    server: _SmtpServer

    def _say(self, line: str) -> None:
        self.wfile.write(f"{line}\r\n".encode())

    def handle(self) -> None:
        self._say("220 updraft-test ESMTP")
        sender, recipients = "", []
        while line := self.rfile.readline():
            command = line.decode().strip()
            verb = command.split(" ", 1)[0].upper()
            if verb == "EHLO":
                self._say("250-updraft-test")
                self._say("250 8BITMIME")
            elif verb in ("HELO", "RSET", "NOOP"):
                self._say("250 OK")
            elif verb == "MAIL":
                sender, recipients = command.split(":", 1)[1].strip().strip("<>"), []
                self._say("250 OK")
            elif verb == "RCPT":
                recipients.append(command.split(":", 1)[1].strip().strip("<>"))
                self._say("250 OK")
            elif verb == "DATA":
                self._say("354 End data with <CR><LF>.<CR><LF>")
                data = b""
                while (chunk := self.rfile.readline()) not in (b".\r\n", b""):
                    data += chunk[1:] if chunk.startswith(b"..") else chunk
                with self.server.lock:
                    self.server.mails.append((sender, recipients, message_from_bytes(data)))
                self._say("250 OK: queued")
            elif verb == "QUIT":
                self._say("221 Bye")
                return
            else:
                self._say("502 Command not implemented")


class _SmtpServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _SmtpHandler)
        self.mails: list[tuple[str, list[str], Message]] = []
        self.lock = threading.Lock()
        self.requests: list[Request] = []


def smtp_server() -> contextlib.AbstractContextManager[Fake]:
    """``Fake.server.mails``: (sender, recipients, message) of every mail received."""
    return _serving(_SmtpServer())


# -- Databricks Jobs API ---------------------------------------------------------------------------------------
def databricks_jobs_api(token: str) -> Respond:
    """runs/submit and run-now start a run; runs/get says PENDING, then RUNNING (four times for a run named
    "deferred ..."), then TERMINATED with SUCCESS, or FAILED when the run's name (submit) or job_id (run-now, odd
    ids) says so. A wrong token gets a 401."""
    lock = threading.Lock()
    runs: dict[int, dict[str, Any]] = {}

    def start(fails: bool, job_id: int | None, running: int = 1) -> Reply:
        with lock:
            run_id = 1000 + len(runs)
            runs[run_id] = {"fails": fails, "job_id": job_id, "gets": 0, "life": ("PENDING",) + ("RUNNING",) * running}
        return Reply(200, {"run_id": run_id, "number_in_job": run_id})

    def state(run: dict[str, Any]) -> dict[str, Any]:
        life = run["life"]
        if run["gets"] <= len(life):
            return {"life_cycle_state": life[run["gets"] - 1], "state_message": ""}
        result = "FAILED" if run["fails"] else "SUCCESS"
        return {"life_cycle_state": "TERMINATED", "result_state": result,
                "state_message": "the notebook raised" if run["fails"] else ""}

    def respond(request: Request) -> Reply:
        if request.headers.get("Authorization") != f"Bearer {token}":
            return Reply(401, {"error_code": "UNAUTHENTICATED", "message": "bad token"})
        if request.method == "POST" and request.path == "/api/2.2/jobs/runs/submit":
            name = request.json().get("run_name", "")
            return start(name.startswith("fail"), None, 4 if name.startswith("deferred") else 1)
        if request.method == "POST" and request.path == "/api/2.2/jobs/run-now":
            job_id = int(request.json()["job_id"])
            return start(job_id % 2 == 1, job_id)
        if request.method == "GET" and request.path == "/api/2.2/jobs/runs/get":
            # The provider's sync hook asks with a query string, its async one (triggers) with a JSON body.
            run_id = int(request.query["run_id"][0] if "run_id" in request.query else request.json()["run_id"])
            with lock:
                run = runs[run_id]
                run["gets"] += 1
                body = {"run_id": run_id, "job_id": run["job_id"], "state": state(run),
                        "run_page_url": f"https://fake.databricks/#job/{run['job_id']}/run/{run_id}", "tasks": []}
            return Reply(200, body)
        return Reply(404, {"error_code": "ENDPOINT_NOT_FOUND", "message": request.path})

    return respond


# -- Snowflake SQL API -----------------------------------------------------------------------------------------
def snowflake_sql_api() -> Respond:
    """POST /api/v2/statements takes statements (one handle per statement when MULTI_STATEMENT_COUNT > 1); GET
    /api/v2/statements/<handle> says 202 (running) once, then 200, or 422 for a statement that mentions
    ``no_such_table``. Any request without a ``Bearer`` key-pair JWT gets a 401."""
    lock = threading.Lock()
    statements: dict[str, dict[str, Any]] = {}

    def respond(request: Request) -> Reply:
        if request.headers.get("X-Snowflake-Authorization-Token-Type") != "KEYPAIR_JWT" or \
                not request.headers.get("Authorization", "").startswith("Bearer "):
            return Reply(401, {"code": "390303", "message": "no key-pair token"})
        if request.method == "POST" and request.path == "/api/v2/statements":
            body = request.json()
            parts = [s.strip() for s in body["statement"].split(";") if s.strip()]
            with lock:
                handles = []
                for text in parts:
                    handle = f"01b-{len(statements):04d}"
                    statements[handle] = {"sql": text, "gets": 0}
                    handles.append(handle)
            if len(handles) == 1:
                return Reply(202, {"statementHandle": handles[0], "message": "Asynchronous execution in progress."})
            return Reply(202, {"statementHandle": "01b-multi", "statementHandles": handles,
                               "message": "Asynchronous execution in progress."})
        if request.method == "GET" and request.path.startswith("/api/v2/statements/"):
            handle = request.path.rsplit("/", 1)[1]
            with lock:
                statement = statements[handle]
                statement["gets"] += 1
                gets = statement["gets"]
            if "no_such_table" in statement["sql"]:
                return Reply(422, {"code": "002003", "sqlState": "42S02", "statementHandle": handle,
                                   "message": "Object 'NO_SUCH_TABLE' does not exist or not authorized."})
            if gets == 1:
                return Reply(202, {"statementHandle": handle, "message": "Asynchronous execution in progress."})
            return Reply(200, {"statementHandle": handle, "message": "Statement executed successfully.",
                               "data": [["1"]], "resultSetMetaData": {"numRows": 1}})
        return Reply(404, {"message": request.path})

    return respond
