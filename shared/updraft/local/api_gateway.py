"""Local mode's API Gateway: HTTP requests become REST proxy events for the api handler, as deployed.

moto does not run Lambda code, so a small threaded HTTP server on 127.0.0.1 turns each request into the event
API Gateway would send (``resource: /{proxy+}``, headers, query string, body, a request context whose identity
is the local user: IAM authorization is AWS's job, not the function's) and writes back the function's
``statusCode``, headers and body.
"""

from __future__ import annotations

import base64
import datetime as dt
import getpass
import json
import threading
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

Handler = Callable[[dict[str, Any]], dict[str, Any]]


def proxy_event(method: str, target: str, headers: dict[str, str], body: bytes, *, stage: str = "local",
                account: str = "123456789012") -> dict[str, Any]:
    """The REST proxy event for one request (the shape of ``events/api/*.json``)."""
    url = urlsplit(target)
    query = parse_qsl(url.query, keep_blank_values=True)
    multi: dict[str, list[str]] = {}
    for name, value in query:
        multi.setdefault(name, []).append(value)
    text_body = body.decode("utf-8", errors="strict") if body else None
    user = getpass.getuser()
    now = dt.datetime.now(dt.UTC)
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
            "identity": {"caller": user, "user": user, "accountId": account, "sourceIp": "127.0.0.1",
                         "userArn": f"arn:aws:iam::{account}:user/{user}", "accessKey": None},
        },
        "body": text_body, "isBase64Encoded": False,
    }


class LocalApiGateway:
    def __init__(self, handler: Handler, host: str = "127.0.0.1", port: int = 0) -> None:
        gateway = self

        class RequestHandler(BaseHTTPRequestHandler):
            def _proxy(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                event = proxy_event(self.command, self.path, dict(self.headers.items()), self.rfile.read(length))
                try:
                    response = gateway.handler(event)
                except Exception as exc:  # what API Gateway answers when the function fails
                    message = json.dumps({"message": f"Internal server error: {type(exc).__name__}"})
                    response = {"statusCode": 502, "body": message, "headers": {"Content-Type": "application/json"}}
                body = response.get("body") or ""
                raw = base64.b64decode(body) if response.get("isBase64Encoded") else body.encode()
                self.send_response(int(response.get("statusCode", 200)))
                for name, value in (response.get("headers") or {}).items():
                    self.send_header(name, str(value))
                for name, values in (response.get("multiValueHeaders") or {}).items():
                    for value in values:
                        self.send_header(name, str(value))
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _proxy

            def log_message(self, format: str, *args: Any) -> None:
                pass  # local mode prints its own lines

        self.handler = handler
        self._server = ThreadingHTTPServer((host, port), RequestHandler)
        self.url = f"http://{host}:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="local-api", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
