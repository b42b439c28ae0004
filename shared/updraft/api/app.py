"""The API's Powertools resolver: every route of ``updraft.api.routes`` behind API Gateway's REST proxy event.

Imported by the API Lambda on its first request, not at cold import (Powertools' resolver costs ~100 ms).
What the resolver adds to the routes:

- path parameters percent-decoded (API Gateway's REST proxy passes the path still encoded; a run id such as
  ``manual__2025-01-01T00:00:00+00:00`` arrives as ``...%3A00%2B00%3A00``);
- Airflow's error bodies: an :class:`~updraft.api.errors.ApiError` becomes its status and ``{"detail": ...}``;
  a path no route has is 404 ``{"error": "API route not found"}``, or the UI's shell with 404 when a browser
  navigates there (``updraft.api.routes.ui.missing_page``); a path served under other methods is 405;
- the caller's role checked against the route's (``updraft.api.auth``): 401 or 403 before the route runs; a
  change a browser says another site sent is 403 whatever it carries;
- every ``/api/v2`` route also at ``/ui/api/v2`` (and Updraft's ``/api/updraft`` at ``/ui/api/updraft``), for the
  web UI's session cookie
  (:mod:`updraft.api.auth.session`: the cookie's token checked, and a change's CSRF token);
- the security headers of :mod:`updraft.api.headers` on every answer;
- an audit record of every successful change (:mod:`updraft.api.audit`);
- a value larger than the store keeps (:class:`~updraft.store.errors.ValueTooLarge`: a variable or connection
  over one item, a secret over KMS's limit) is the client's error, 400 with the store's message saying which
  and by how much;
- a domain error a route lets through (an unknown DAG, a run that already exists, a backfill refused...) is
  answered as :data:`~updraft.api.domain_errors.DOMAIN_ERRORS` says, Airflow's status and detail;
- nothing a request sends can crash the function: any other exception is logged and answers 500
  ``{"detail": "Internal Server Error"}`` (a 5xx counts in the ``Api5xx`` alarm metric).

Bodies are JSON text with ``Content-Type: application/json`` exactly, which airflowctl requires to read an
error.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from aws_lambda_powertools import Logger
from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response, content_types
from aws_lambda_powertools.event_handler.exceptions import NotFoundError

from updraft.api.answer_size import MAX_ANSWER_BYTES, text_carried_size
from updraft.api.audit import record_change
from updraft.api.auth import authorize
from updraft.api.auth.session import SESSION_PREFIX, refuse_cross_site, through_session
from updraft.api.domain_errors import domain_answer
from updraft.api.errors import ApiError, ContentTooLarge, MethodNotAllowed
from updraft.api.headers import security_headers
from updraft.api.request import Request
from updraft.api.routes import all_routes
from updraft.api.routes.ui import missing_page, wants_page
from updraft.api.routing import Call, Reply, Route, is_api_path
from updraft.store.errors import ValueTooLarge

if TYPE_CHECKING:
    from updraft.services import Services

# The API Lambda's logger (its JSON lines carry the request's correlation id).
log = Logger(service="updraft-api", child=True)

# Airflow's body for an unknown /api path, plus the statusCode Powertools' own 404 carried (callers of the
# health-only API read it).
NOT_FOUND_BODY = {"error": "API route not found", "statusCode": 404}


def _answer(status: int, content_type: str | None, body: str, headers: dict[str, str] | None = None) -> Response:
    return Response(status_code=status, content_type=content_type, body=body,
                    headers={**security_headers(content_type), **(headers or {})})


def _json(status: int, body: Any, headers: dict[str, str] | None = None) -> Response:
    if body is None:
        return _answer(status, None, "", headers)
    return _answer(status, content_types.APPLICATION_JSON, json.dumps(body), headers)


def _sendable(response: Response) -> Response:
    """``response``, or a 413 in its place when it would be larger than the Lambda can answer (``answer_size``):
    the routes whose answers grow with data keep under it themselves; this is the bound for every other one."""
    body = response.body
    if not isinstance(body, str) or len(body) * 6 < MAX_ANSWER_BYTES:  # escaping grows a character 6 times at most
        return response
    size = text_carried_size(body)
    if size <= MAX_ANSWER_BYTES:
        return response
    error = ContentTooLarge(f"The answer would take {size:,} bytes, more than the API can send "
                            f"({MAX_ANSWER_BYTES:,}); ask for less at a time (a smaller limit).")
    return _json(error.status, error.body())


def _request(event: Any, path_params: dict[str, str]) -> Request:
    return Request(method=event.http_method.upper(), path=event.path,
                   path_params={name: unquote(value) for name, value in path_params.items()},
                   query={k: list(v) for k, v in (event.multi_value_query_string_parameters or {}).items()},
                   body=event.decoded_body, headers=dict(event.headers or {}),
                   context=dict(event.raw_event.get("requestContext") or {}))


def build_app(services: Callable[[], Services], routes: list[Route] | None = None) -> APIGatewayRestResolver:
    """A resolver serving ``routes`` (default: all of them); ``services`` gives the process's Services."""
    routes = all_routes() if routes is None else routes
    app = APIGatewayRestResolver()

    def respond(route: Route, path_params: dict[str, str], *, session: bool = False) -> Response:
        """The route's answer; with ``session``, to a request at ``/ui/api/v2/...`` made by the UI's session."""
        request = _request(app.current_event, path_params)
        refuse_cross_site(request)
        if session:
            request = through_session(request, services().config)
        call = Call(request, services)
        authorize(route, call)
        call.check_path()
        result = route.endpoint(call)
        record_change(call, route)
        if isinstance(result, Reply) and result.content_type is not None:
            return _sendable(_answer(result.status, result.content_type, result.body, result.headers))
        if isinstance(result, Reply):
            return _sendable(_json(result.status, result.body, result.headers))
        return _sendable(_json(route.status, result))

    def register(route: Route, prefix: str = "") -> None:
        rule = (prefix + route.path).replace("{", "<").replace("}", ">")
        app.route(rule, route.method)(lambda **params: respond(route, params, session=bool(prefix)))

    for route in routes:
        register(route)
    for route in routes:  # after every route: an /api/v2 call never tries these first
        if is_api_path(route.path):
            register(route, SESSION_PREFIX)

    @app.not_found
    def not_found(_exc: NotFoundError) -> Response:
        """No route matched as Powertools reads the path: a route of this method may still match a segment
        Powertools' pattern refuses (its character set is narrower than a path segment); another method's
        route means 405, with the methods it has in ``Allow``."""
        event = app.current_event
        method, path = event.http_method.upper(), event.path
        session = path.startswith(SESSION_PREFIX + "/") and is_api_path(path[len(SESSION_PREFIX):])
        if session:
            path = path[len(SESSION_PREFIX):]
        allowed = []
        for route in routes:
            match = route.pattern.match(path)
            if match is None or (session and not is_api_path(route.path)):
                continue
            if route.method == method:
                return respond(route, match.groupdict(), session=session)
            allowed.append(route.method)
        if allowed:
            error = MethodNotAllowed("Method Not Allowed")
            return _json(error.status, error.body(), {"Allow": ", ".join(sorted(set(allowed)))})
        accept = next((v for k, v in (event.headers or {}).items() if k.lower() == "accept"), None)
        if wants_page(method, path, accept):
            page = missing_page(path)
            return _answer(page.status, page.content_type, page.body, page.headers)
        return _json(404, NOT_FOUND_BODY)

    @app.exception_handler(ApiError)
    def api_error(exc: ApiError) -> Response:
        return _json(exc.status, exc.body())

    @app.exception_handler(ValueTooLarge)
    def too_large(exc: ValueTooLarge) -> Response:
        return _json(400, {"detail": str(exc)})

    @app.exception_handler(Exception)
    def unexpected(exc: Exception) -> Response:
        """A domain error of :data:`~updraft.api.domain_errors.DOMAIN_ERRORS` answered as the table says (Powertools
        would need its class imported to register it there); any other exception a 500."""
        answer = domain_answer(exc)
        if answer is not None:
            return _json(*answer)
        log.exception(f"API request failed: {app.current_event.http_method} {app.current_event.path}",
                      exc_info=exc)
        return _json(500, {"detail": "Internal Server Error"})

    return app
