"""Routes as plain data: a method, Airflow's path template and a function of one :class:`Call`.

Route modules (``updraft.api.routes.*``) declare their routes on a :class:`RouteTable`; ``updraft.api.app``
hands them to Powertools' resolver. Keeping routes framework-free lets them be read (405s, the route table in
the README, an OpenAPI subset later) and called without API Gateway events.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from updraft.api.body import size_issue
from updraft.api.errors import Unprocessable, issue
from updraft.api.request import Query, Request
from updraft.model.identifiers import ID_LEN

if TYPE_CHECKING:
    from updraft.services import Services
    from updraft.store.api import Store

API_PREFIX = "/api/v2"
# Updraft's own routes (costs), apart from Airflow's: a client generated from Airflow's document never meets them,
# and a route Airflow adds later under /api/v2 never collides with one of them. Authorized as /api/v2's are, by
# their first segment (``api.auth.policy``), and reachable through the UI's session the same way.
UPDRAFT_API_PREFIX = "/api/updraft"


def is_api_path(path: str) -> bool:
    """A route of the REST API: Airflow's (``/api/v2/...``) or Updraft's own (``/api/updraft/...``)."""
    return path.startswith((API_PREFIX + "/", UPDRAFT_API_PREFIX + "/"))

PATH_LIMITS = {"pool_name": 256, "xcom_key": 512, "key": 512}  # Airflow's columns for the other named things


@dataclass
class Reply:
    """A status other than the route's default, an empty body (``body=None``: 204), or a body that is not JSON
    (``content_type`` given: ``body`` is sent as the text it is)."""

    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str | None = None


class Call:
    """What a route function gets: the request, its query reader, and the process's services (built lazily:
    a route that never touches the store never builds it)."""

    def __init__(self, request: Request, services: Callable[[], Services], *,
                 now: Callable[[], dt.datetime] | None = None) -> None:
        self.request = request
        self.query = Query(request)
        self._services = services
        self._now = now or (lambda: dt.datetime.now(dt.UTC))

    @functools.cached_property
    def services(self) -> Services:
        return self._services()

    @property
    def store(self) -> Store:
        return self.services.store

    def path(self, name: str) -> str:
        return self.request.path_params[name]

    def check_path(self) -> None:
        """Ids no longer than Airflow's (and than a DynamoDB key holds): anything longer cannot exist, and would
        fail the store's key validation; 422 as pydantic reports a too-long string."""
        problems = [problem for name, value in self.request.path_params.items()
                    if (problem := size_issue(("path", name), value, PATH_LIMITS.get(name, ID_LEN), key=True))]
        if problems:
            raise Unprocessable(problems)

    def int_path(self, name: str) -> int:
        """An integer path parameter (``map_index``, ``import_error_id``); not one is a 422, as in Airflow."""
        raw = self.path(name)
        try:
            return int(raw)
        except ValueError:
            raise Unprocessable([issue("int_parsing", ("path", name),
                                       "Input should be a valid integer, unable to parse string as an integer",
                                       raw)]) from None

    def now(self) -> dt.datetime:
        return self._now()


Endpoint = Callable[[Call], Any]


@dataclass(frozen=True)
class Route:
    method: str
    path: str  # Airflow's template: /api/v2/dags/{dag_id}
    endpoint: Endpoint
    status: int = 200

    @functools.cached_property
    def pattern(self) -> re.Pattern[str]:
        """The template as a regex over a raw (still percent-encoded) path: a parameter is one segment."""
        parts = re.split(r"(\{\w+\})", self.path)
        body = "".join(f"(?P<{p[1:-1]}>[^/]+)" if p.startswith("{") else re.escape(p) for p in parts)
        return re.compile(f"^{body}$")


class RouteTable:
    """The routes of one resource module, declared with decorators (``@routes.get("/dags/{dag_id}")``)."""

    def __init__(self, prefix: str = API_PREFIX) -> None:
        self.prefix = prefix
        self.routes: list[Route] = []

    def add(self, method: str, path: str, status: int = 200) -> Callable[[Endpoint], Endpoint]:
        def register(endpoint: Endpoint) -> Endpoint:
            self.routes.append(Route(method, self.prefix + path, endpoint, status))
            return endpoint

        return register

    def get(self, path: str, status: int = 200) -> Callable[[Endpoint], Endpoint]:
        return self.add("GET", path, status)

    def post(self, path: str, status: int = 200) -> Callable[[Endpoint], Endpoint]:
        return self.add("POST", path, status)

    def patch(self, path: str, status: int = 200) -> Callable[[Endpoint], Endpoint]:
        return self.add("PATCH", path, status)

    def put(self, path: str, status: int = 200) -> Callable[[Endpoint], Endpoint]:
        return self.add("PUT", path, status)

    def delete(self, path: str, status: int = 204) -> Callable[[Endpoint], Endpoint]:
        return self.add("DELETE", path, status)
