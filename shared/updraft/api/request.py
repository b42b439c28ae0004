"""One API request, framework-free, and typed reads of its query string that report every bad value at once.

Routes read parameters through :class:`Query`; a value of the wrong type is collected as a pydantic-shaped
issue and the whole request answers 422 (Airflow's validation shape) when the route calls :meth:`Query.check`,
so nothing a client sends reaches the store unparsed.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any, overload

from updraft.api.errors import Unprocessable, issue
from updraft.api.formats import parse_datetime

_TRUE = {"true", "1", "yes", "on", "t", "y"}
_FALSE = {"false", "0", "no", "off", "f", "n"}


@dataclass
class Request:
    method: str
    path: str
    path_params: dict[str, str] = field(default_factory=dict)
    query: dict[str, list[str]] = field(default_factory=dict)
    body: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    context: dict[str, Any] = field(default_factory=dict)  # API Gateway's requestContext: who is calling

    @property
    def caller(self) -> str:
        """Who sent the request, as API Gateway identified them (a JWT's user, else the IAM caller's ARN)."""
        claims = (self.context.get("authorizer") or {}).get("claims") or {}
        identity = self.context.get("identity") or {}
        return str(claims.get("cognito:username") or claims.get("username") or claims.get("sub")
                   or identity.get("userArn") or identity.get("user") or "anonymous")

    def header(self, name: str) -> str | None:
        lowered = name.lower()
        return next((v for k, v in self.headers.items() if k.lower() == lowered), None)


class Query:
    """Typed, validated reads of a request's query string (repeatable parameters as lists, as Airflow's)."""

    def __init__(self, request: Request) -> None:
        self._values = request.query
        self.issues: list[dict[str, Any]] = []

    def _last(self, name: str) -> str | None:
        values = self._values.get(name)
        return values[-1] if values else None

    def string(self, name: str, default: str | None = None) -> str | None:
        value = self._last(name)
        return default if value is None else value

    def strings(self, name: str, default: list[str] | None = None) -> list[str]:
        return list(self._values.get(name) or default or [])

    @overload
    def integer(self, name: str, default: int, *, ge: int | None = None) -> int: ...

    @overload
    def integer(self, name: str, default: None = None, *, ge: int | None = None) -> int | None: ...

    def integer(self, name: str, default: int | None = None, *, ge: int | None = None) -> int | None:
        raw = self._last(name)
        if raw is None:
            return default
        try:
            value = int(raw.strip())
        except ValueError:
            self.issues.append(issue("int_parsing", ("query", name),
                                     "Input should be a valid integer, unable to parse string as an integer", raw))
            return default
        if ge is not None and value < ge:
            self.issues.append(issue("greater_than_equal", ("query", name),
                                     f"Input should be greater than or equal to {ge}", raw))
            return default
        return value

    def boolean(self, name: str, default: bool | None = None) -> bool | None:
        raw = self._last(name)
        if raw is None:
            return default
        if raw.strip().lower() in _TRUE:
            return True
        if raw.strip().lower() in _FALSE:
            return False
        self.issues.append(issue("bool_parsing", ("query", name),
                                 "Input should be a valid boolean, unable to interpret input", raw))
        return default

    def datetime(self, name: str) -> dt.datetime | None:
        raw = self._last(name)
        if raw is None:
            return None
        value = parse_datetime(raw)
        if value is None:
            self.issues.append(issue("datetime_from_date_parsing", ("query", name),
                                     "Input should be a valid datetime or date", raw))
        return value

    def choices(self, name: str, allowed: frozenset[str]) -> list[str]:
        """A repeatable enum parameter (``state=running&state=queued``); an unknown member is a 422."""
        values = self.strings(name)
        for value in values:
            if value not in allowed:
                expected = ", ".join(f"'{a}'" for a in sorted(allowed))
                self.issues.append(issue("enum", ("query", name), f"Input should be {expected}", value))
        return [v for v in values if v in allowed]

    def check(self) -> None:
        """Answer 422 with every issue found so far."""
        if self.issues:
            raise Unprocessable(self.issues)
