"""The errors a route raises, each carrying Airflow's status code and body, so every client parses them.

Airflow (FastAPI) answers ``{"detail": "<message>"}`` for 400/401/403/404/405/409 and, for a request that fails
validation, 422 ``{"detail": [{"type", "loc", "msg", "input"}]}`` (pydantic's error list). The official client
maps each status to its exception class (``NotFoundException``...) and parses ``detail``; airflowctl prints it.
"""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """An answer other than success, decided by a route: status and ``{"detail": ...}``."""

    status = 500

    def __init__(self, detail: Any) -> None:
        super().__init__(detail)
        self.detail = detail

    def body(self) -> dict[str, Any]:
        return {"detail": self.detail}


class BadRequest(ApiError):
    status = 400


class Unauthorized(ApiError):
    """401: no credentials, or credentials that do not log in (Airflow's ``Not authenticated``)."""

    status = 401


class Forbidden(ApiError):
    status = 403


class NotFound(ApiError):
    status = 404


class MethodNotAllowed(ApiError):
    status = 405


class NotAcceptable(ApiError):
    status = 406


class Conflict(ApiError):
    status = 409


class ContentTooLarge(ApiError):
    """413: the answer would be larger than the API can send (``answer_size``); the detail says where to get
    what was asked for instead. Airflow has no such answer (it sends whatever size); the official client raises
    its ``ApiException`` with this status and body."""

    status = 413


def issue(kind: str, loc: tuple[str | int, ...], msg: str, value: Any = None) -> dict[str, Any]:
    """One entry of a 422, shaped as pydantic reports it (``loc`` starts with ``query``, ``path`` or ``body``)."""
    return {"type": kind, "loc": list(loc), "msg": msg, "input": value}


class Unprocessable(ApiError):
    """422: the request's parameters or body do not have the shape the route declares (all issues at once)."""

    status = 422

    def __init__(self, issues: list[dict[str, Any]]) -> None:
        super().__init__(issues)


def dag_not_found(dag_id: str) -> NotFound:
    return NotFound(f"Dag with dag_id: '{dag_id}' not found")


def run_not_found(dag_id: str, run_id: str) -> NotFound:
    return NotFound(f"The DagRun with dag_id: `{dag_id}` and run_id: `{run_id}` was not found")
