"""Local mode's API Gateway: HTTP requests become REST proxy events for the api handler, as deployed.

moto does not run Lambda code, so a small threaded HTTP server on 127.0.0.1 turns each request into the event
API Gateway would send (``resource: /{proxy+}``, headers, query string, body, a request context saying who
calls) and writes back the function's ``statusCode``, headers and body. A request is read as API Gateway reads
it: by its ``Content-Length`` (a bad one is 400, a chunked body without one 411, over 10 MB 413), as UTF-8
text (else 400), within a read timeout (else 408), so no request holds a thread waiting for bytes that will not
come or reaches the function with a body it could not decode.

Who calls is decided here, as API Gateway decides it before the function runs (``infra/constructs/api.py``):

- by default, as the IAM API: every request comes from the local user's IAM identity (every caller is the
  environment's IAM caller role, ADMIN: Airflow's ``simple_auth_manager_all_admins``);
- with users (``updraft local --users``), as the users API: a :class:`CognitoAuthorizer` checks the bearer
  token of every method but the open ones (``updraft.api.auth.policy.OPEN_METHODS``) and puts its claims in
  ``requestContext.authorizer.claims``; no valid token is API Gateway's 401, with Airflow's body.

The tokens are moto's Cognito's (``POST /auth/token`` calls ``InitiateAuth`` as on AWS), signed with the key moto
publishes: local users mode tests roles and the login flow, it is no security boundary (nor is Airflow's simple
auth manager, which it stands in for). The API listens on 127.0.0.1 only.
"""

from __future__ import annotations

import base64
import datetime as dt
import getpass
import json
import logging
import threading
import uuid
from collections.abc import Callable
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

from updraft.api.auth.policy import requirement
from updraft.api.auth.tokens import TokenVerifier

if TYPE_CHECKING:
    from updraft.local.users import UserPool

log = logging.getLogger(__name__)

Handler = Callable[[dict[str, Any]], dict[str, Any]]

# API Gateway's UNAUTHORIZED response, as the stack configures it: Airflow's body for a missing credential.
UNAUTHORIZED_BODY = {"detail": "Not authenticated"}
MAX_BODY_BYTES = 10 * 1024 * 1024  # API Gateway's payload limit
READ_TIMEOUT = 10.0  # seconds a client may take to send its request line, headers and body


class CognitoAuthorizer:
    """A REST API's Cognito user pool authorizer: the ``Authorization`` header holds an ID token of the pool
    (bare or after ``Bearer``), checked as API Gateway checks it (:class:`~updraft.api.auth.tokens.TokenVerifier`)."""

    def __init__(self, pool: UserPool, keys: dict[str, Any] | None = None) -> None:
        self.verifier = TokenVerifier(pool.issuer, pool.client_id, pool.jwks_url, keys)

    def claims(self, authorization: str | None) -> dict[str, str] | None:
        """The token's claims as API Gateway passes them (strings; a list joined with commas), or None."""
        token = (authorization or "").strip()
        if token[:7].lower() == "bearer ":
            token = token[7:].strip()
        return self.verifier.claims(token)


def proxy_event(method: str, target: str, headers: dict[str, str], body: bytes, *, stage: str = "local",
                account: str = "123456789012", claims: dict[str, str] | None = None, iam: bool = True
                ) -> dict[str, Any]:
    """The REST proxy event for one request (the shape of ``events/api/*.json``): from the local user's IAM
    identity (``iam``), else with a Cognito authorizer's ``claims``, else anonymous (an open method of the users
    API)."""
    url = urlsplit(target)
    query = parse_qsl(url.query, keep_blank_values=True)
    multi: dict[str, list[str]] = {}
    for name, value in query:
        multi.setdefault(name, []).append(value)
    text_body = body.decode("utf-8", errors="strict") if body else None
    user = getpass.getuser()
    now = dt.datetime.now(dt.UTC)
    signer = {"caller": user, "user": user, "userArn": f"arn:aws:iam::{account}:user/{user}"} if iam else {
        "caller": None, "user": None, "userArn": None}
    return {
        "resource": "/{proxy+}", "path": url.path, "httpMethod": method,
        "headers": headers, "multiValueHeaders": {k: [v] for k, v in headers.items()},
        "queryStringParameters": {k: v[-1] for k, v in multi.items()} or None,
        "multiValueQueryStringParameters": multi or None,
        "pathParameters": {"proxy": url.path.lstrip("/")}, "stageVariables": None,
        "requestContext": {
            "resourcePath": "/{proxy+}", "httpMethod": method, "path": f"/{stage}{url.path}", "stage": stage,
            "accountId": account, "protocol": "HTTP/1.1", "requestId": str(uuid.uuid4()),
            "requestTime": now.strftime("%d/%b/%Y:%H:%M:%S +0000"), "requestTimeEpoch": int(now.timestamp() * 1000),
            "identity": {**signer, "accountId": account if iam else None, "sourceIp": "127.0.0.1",
                         "accessKey": None},
            **({"authorizer": {"claims": claims}} if claims is not None else {}),
        },
        "body": text_body, "isBase64Encoded": False,
    }


class FramingError(Exception):
    """A request whose body cannot be read as sent: the status API Gateway answers and why."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


def refusal(status: int, detail: str) -> dict[str, Any]:
    """API Gateway's own answer to a request it does not pass on, in Airflow's error shape."""
    return {"statusCode": status, "body": json.dumps({"detail": detail}),
            "headers": {"Content-Type": "application/json"}}


def body_length(method: str, headers: Message) -> int:
    """The body's length as the headers frame it (RFC 9112 6.3), refusing what API Gateway refuses before the
    function runs: a ``Content-Length`` that is not one decimal number (400; two that disagree are not one), a
    body over :data:`MAX_BODY_BYTES` (413), a chunked or otherwise encoded body with no length (411: the gateway
    reads bodies by length only). No ``Content-Length`` and no ``Transfer-Encoding`` is an empty body, whatever
    the method."""
    lengths = sorted({value.strip() for value in headers.get_all("Content-Length") or []})
    if not lengths:
        if headers.get("Transfer-Encoding") is not None:
            raise FramingError(411, f"Length Required: a {method} body must come with a Content-Length")
        return 0
    if len(lengths) > 1 or not (lengths[0].isascii() and lengths[0].isdigit()):
        raise FramingError(400, f"Bad Request: invalid Content-Length {', '.join(lengths)!r}")
    length = int(lengths[0])
    if length > MAX_BODY_BYTES:
        raise FramingError(413, f"Request Entity Too Large: the body is {length} bytes, over API Gateway's "
                                f"{MAX_BODY_BYTES} byte payload limit")
    return length


class LocalApiGateway:
    """The HTTP server: each request read by its framing, with a socket timeout so a client that stops sending
    (a ``Content-Length`` larger than what it sends) frees its thread after ``read_timeout`` seconds (408)."""

    def __init__(self, handler: Handler, host: str = "127.0.0.1", port: int = 0,
                 authorizer: CognitoAuthorizer | None = None, read_timeout: float = READ_TIMEOUT) -> None:
        gateway = self

        class RequestHandler(BaseHTTPRequestHandler):
            timeout = read_timeout  # socketserver applies it to the connection: every read is bounded

            def _proxy(self) -> None:
                try:
                    body = self.rfile.read(body_length(self.command, self.headers))
                    body.decode("utf-8")
                except FramingError as err:
                    self._answer(refusal(err.status, err.detail), close=True)
                    return
                except UnicodeDecodeError as err:
                    self._answer(refusal(400, f"Bad Request: the body is not valid UTF-8 (byte {err.start})"))
                    return
                except TimeoutError:
                    self._answer(refusal(408, f"Request Timeout: no complete body within {read_timeout} s"),
                                 close=True)
                    return
                self._answer(gateway.answer(self.command, self.path, dict(self.headers.items()), body))

            def _answer(self, response: dict[str, Any], *, close: bool = False) -> None:
                text = response.get("body") or ""
                raw = base64.b64decode(text) if response.get("isBase64Encoded") else text.encode()
                self.send_response(int(response.get("statusCode", 200)))
                for name, value in (response.get("headers") or {}).items():
                    self.send_header(name, str(value))
                for name, values in (response.get("multiValueHeaders") or {}).items():
                    for value in values:
                        self.send_header(name, str(value))
                self.send_header("Content-Length", str(len(raw)))
                if close:  # what was not read of the request cannot be told from the next one
                    self.send_header("Connection", "close")
                    self.close_connection = True
                self.end_headers()
                self.wfile.write(raw)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _proxy

            def log_message(self, format: str, *args: Any) -> None:
                pass  # local mode prints its own lines

        self.handler = handler
        self.authorizer = authorizer
        self._server = ThreadingHTTPServer((host, port), RequestHandler)
        self.url = f"http://{host}:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="local-api", daemon=True)
        self._thread.start()

    def answer(self, method: str, target: str, headers: dict[str, str], body: bytes) -> dict[str, Any]:
        """What API Gateway answers one request: the function's response, or its own 401 or 502."""
        claims = None
        if self.authorizer is not None and not requirement(method, urlsplit(target).path).public:
            authorization = next((v for k, v in headers.items() if k.lower() == "authorization"), None)
            claims = self.authorizer.claims(authorization)
            if claims is None:
                return refusal(401, UNAUTHORIZED_BODY["detail"])
        event = proxy_event(method, target, headers, body, claims=claims, iam=self.authorizer is None)
        try:
            return self.handler(event)
        except Exception as exc:  # what API Gateway answers when the function fails; Lambda logs the traceback
            log.exception("local mode: the API function failed on %s %s", method, target)
            message = json.dumps({"message": f"Internal server error: {type(exc).__name__}"})
            return {"statusCode": 502, "body": message, "headers": {"Content-Type": "application/json"}}

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
