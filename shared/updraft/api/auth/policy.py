"""Which role each route needs: Airflow's simple auth manager, as a rule over the route's method and path.

Airflow guards every route with the resource it touches (``requires_access_dag``, ``requires_access_pool``...)
and the simple auth manager grants each resource to a minimum role, one for reads (GET) and one for changes:

===============================================  ==========  ==========
resource (first path segment after ``/api/v2``)  reads       changes
===============================================  ==========  ==========
DAGs and all under them: runs, task instances,   VIEWER      USER
XComs, logs, backfills, dagStats, dagSources,
dagTags, dagWarnings, eventLogs, parseDagFile,
ui (the web UI's views' data)
pools, configuration, assets                     VIEWER      OP
variables, connections                           OP          OP
importErrors, plugins, providers, jobs (views)   VIEWER      VIEWER
===============================================  ==========  ==========

Airflow's batch reads are POSTs guarded as reads (``POST /dags/~/dagRuns/list``, ``.../taskInstances/list``): a
POST whose last segment is ``list`` is a read here too. ``monitor/health``, ``version`` and the ``/auth/token``
routes are public, as Airflow mounts them outside its authenticated router.

The rule reads only the resource segment, so a route another module adds under a known resource is classified
without an edit here; a route under a segment this table does not know is unclassified, which
:func:`requirement` answers with ADMIN (fail closed) and ``tests/unit/api/test_auth_policy.py`` refuses.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from updraft.api.auth.roles import Role
from updraft.api.auth.session import is_session_path
from updraft.api.routing import API_PREFIX, UPDRAFT_API_PREFIX


class Resource(enum.StrEnum):
    """Airflow's authorization resources (the ``is_authorized_*`` methods of its auth managers)."""

    PUBLIC = "public"
    DAG = "dag"
    POOL = "pool"
    VARIABLE = "variable"
    CONNECTION = "connection"
    CONFIGURATION = "configuration"
    ASSET = "asset"
    VIEW = "view"
    UNCLASSIFIED = "unclassified"


# The simple auth manager's (role for reads, role for changes) of each resource.
ROLES: dict[Resource, tuple[Role, Role]] = {
    Resource.DAG: (Role.VIEWER, Role.USER),
    Resource.POOL: (Role.VIEWER, Role.OP),
    Resource.CONFIGURATION: (Role.VIEWER, Role.OP),
    Resource.ASSET: (Role.VIEWER, Role.OP),
    Resource.VARIABLE: (Role.OP, Role.OP),
    Resource.CONNECTION: (Role.OP, Role.OP),
    Resource.VIEW: (Role.VIEWER, Role.VIEWER),
    Resource.UNCLASSIFIED: (Role.ADMIN, Role.ADMIN),
}

# The first segment after /api/v2 -> the resource Airflow checks for every route under it.
SEGMENTS: dict[str, Resource] = {
    "monitor": Resource.PUBLIC, "version": Resource.PUBLIC,
    "dags": Resource.DAG, "dagStats": Resource.DAG, "dagSources": Resource.DAG, "dagTags": Resource.DAG,
    "dagWarnings": Resource.DAG, "eventLogs": Resource.DAG, "backfills": Resource.DAG,
    "parseDagFile": Resource.DAG, "ui": Resource.DAG,  # the web UI's views' data (routes.ui_views)
    "pools": Resource.POOL, "config": Resource.CONFIGURATION, "assets": Resource.ASSET,
    "variables": Resource.VARIABLE, "connections": Resource.CONNECTION,
    "importErrors": Resource.VIEW, "plugins": Resource.VIEW, "providers": Resource.VIEW, "jobs": Resource.VIEW,
}

# Updraft's own routes (``/api/updraft``) by their first segment: a DAG's and a run's costs as the DAG's runs are
# (VIEWER reads), the environment's cost and metrics as Airflow's views.
UPDRAFT_SEGMENTS: dict[str, Resource] = {"dags": Resource.DAG, "cost": Resource.VIEW, "metrics": Resource.VIEW}

# Outside /api/v2 and open to all: Airflow's token routes (its auth manager's sub-application at /auth), how a
# caller gets credentials; and the OpenAPI document, which FastAPI serves without authentication.
PUBLIC_PATHS = ("/auth/token", "/auth/token/cli", "/openapi.json")


@dataclass(frozen=True)
class Requirement:
    resource: Resource
    role: Role | None  # None: public, no credentials needed
    read: bool

    @property
    def public(self) -> bool:
        return self.role is None


def is_ui_path(path: str) -> bool:
    """The web UI's pages and assets (:mod:`updraft.api.routes.ui`): every path outside ``/api``, Airflow's
    ``/auth`` routes and the UI's session, and its login page. Open, as Airflow serves its UI's pages: they hold
    no data, and draw each page by calling the API through the signed-in user's session."""
    return path == "/auth/login" or not (path.startswith(("/api/", "/auth/", "/openapi.json"))
                                         or is_session_path(path))


def resource_of(path: str) -> Resource:
    """The resource a path (a route's template or a request's path) is under. The UI's session paths are
    public here, as at API Gateway: the function checks their cookie itself (:mod:`updraft.api.auth.session`),
    and a call through ``/ui/api/v2/...`` then needs the role of the ``/api/v2/...`` route it reaches."""
    if path in PUBLIC_PATHS or is_ui_path(path) or is_session_path(path):
        return Resource.PUBLIC
    for prefix, segments in ((API_PREFIX, SEGMENTS), (UPDRAFT_API_PREFIX, UPDRAFT_SEGMENTS)):
        if path.startswith(prefix + "/"):
            return segments.get(path[len(prefix) + 1:].split("/", 1)[0], Resource.UNCLASSIFIED)
    return Resource.UNCLASSIFIED


def is_read(method: str, path: str) -> bool:
    return method in ("GET", "HEAD") or (method == "POST" and path.rstrip("/").rsplit("/", 1)[-1] == "list")


def requirement(method: str, path: str) -> Requirement:
    """What a caller needs to call ``method path`` (the route's template: ``/api/v2/pools/{pool_name}``)."""
    resource = resource_of(path)
    read = is_read(method.upper(), path)
    if resource is Resource.PUBLIC:
        return Requirement(resource, None, read)
    for_reads, for_changes = ROLES[resource]
    return Requirement(resource, for_reads if read else for_changes, read)


# The methods the users API leaves open (no authorizer: API Gateway's ``AuthorizationType.NONE``), which are
# the public routes but the web UI's: how a caller gets a token, health, version and the OpenAPI document. (The
# UI's pages are open under one greedy ``GET /{proxy+}``, its session under ``ANY /ui/{proxy+}``: see
# infra/constructs/api.py.) A test checks they match the routes.
OPEN_METHODS = frozenset({("POST", "/auth/token"), ("GET", "/auth/token"), ("POST", "/auth/token/cli"),
                          ("GET", "/openapi.json"),
                          ("GET", API_PREFIX + "/monitor/health"), ("GET", API_PREFIX + "/version")})
