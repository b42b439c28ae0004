"""Every route has the role Airflow's simple auth manager requires, by the rule of ``updraft.api.auth.policy``;
a route nobody classified fails here (and needs ADMIN at run time)."""

from __future__ import annotations

import pytest

from updraft.api.auth.policy import OPEN_METHODS, Resource, is_ui_path, requirement
from updraft.api.auth.roles import Role, claim_list, highest_role
from updraft.api.auth.session import is_session_path
from updraft.api.routes import all_routes

ROUTES = all_routes()


@pytest.mark.parametrize("route", ROUTES, ids=[f"{r.method} {r.path}" for r in ROUTES])
def test_every_route_is_classified(route) -> None:
    need = requirement(route.method, route.path)
    assert need.resource is not Resource.UNCLASSIFIED, (
        f"{route.method} {route.path}: no rule in updraft.api.auth.policy.SEGMENTS says which resource it is")


def test_the_public_routes_are_exactly_the_users_apis_open_methods() -> None:
    """The stack opens these methods on the users API, local mode's gateway lets them in without a token (and
    the UI's pages and session, each open as a whole)."""
    public = {(r.method, r.path) for r in ROUTES if requirement(r.method, r.path).public}
    assert {(m, p) for m, p in public if not is_ui_path(p) and not is_session_path(p)} == set(OPEN_METHODS)
    session = {(r.method, r.path) for r in ROUTES if r.endpoint.__module__ == "updraft.api.routes.session"}
    assert {(m, p) for m, p in public if is_session_path(p)} == session == {
        ("GET", "/ui/session"), ("POST", "/ui/session"), ("DELETE", "/ui/session")}
    ui = {(r.method, r.path) for r in ROUTES if r.endpoint.__module__ == "updraft.api.routes.ui"}
    assert ui and {(m, p) for m, p in public if is_ui_path(p)} == ui  # the UI's pages: open, GET only
    assert all(method == "GET" for method, _ in ui)


@pytest.mark.parametrize(("method", "path", "role"), [
    ("GET", "/api/v2/dags", Role.VIEWER),
    ("PATCH", "/api/v2/dags/{dag_id}", Role.USER),  # pause
    ("DELETE", "/api/v2/dags/{dag_id}", Role.USER),  # Airflow: is_authorized_dag(DELETE) is USER's
    ("POST", "/api/v2/dags/{dag_id}/dagRuns", Role.USER),  # trigger
    ("POST", "/api/v2/dags/~/dagRuns/list", Role.VIEWER),  # a batch read
    ("POST", "/api/v2/dags/~/dagRuns/~/taskInstances/list", Role.VIEWER),
    ("POST", "/api/v2/dags/{dag_id}/clearTaskInstances", Role.USER),
    ("PATCH", "/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}", Role.USER),  # mark
    ("DELETE", "/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}", Role.USER),
    # XCom entries: Airflow's DagAccessEntity.XCOM, read by a VIEWER, added, edited and deleted by a USER
    ("GET", "/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/xcomEntries", Role.VIEWER),
    ("POST", "/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/xcomEntries", Role.USER),
    ("PATCH", "/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/xcomEntries/{xcom_key}", Role.USER),
    ("DELETE", "/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/xcomEntries/{xcom_key}",
     Role.USER),
    ("POST", "/api/v2/backfills", Role.USER), ("PUT", "/api/v2/backfills/{backfill_id}/pause", Role.USER),
    ("GET", "/api/v2/eventLogs", Role.VIEWER), ("GET", "/api/v2/dagSources/{dag_id}", Role.VIEWER),
    ("GET", "/api/v2/pools", Role.VIEWER), ("POST", "/api/v2/pools", Role.OP),
    ("PATCH", "/api/v2/pools/{pool_name}", Role.OP), ("DELETE", "/api/v2/pools/{pool_name}", Role.OP),
    ("GET", "/api/v2/variables", Role.OP),  # Airflow: variables and connections are OP's, reads too
    ("POST", "/api/v2/variables", Role.OP), ("GET", "/api/v2/connections/{connection_id}", Role.OP),
    ("GET", "/api/v2/config", Role.VIEWER), ("GET", "/api/v2/importErrors", Role.VIEWER),
    ("GET", "/api/v2/somethingNew", Role.ADMIN),  # unclassified: fail closed
    ("GET", "/api/v2/monitor/health", None), ("GET", "/api/v2/version", None), ("POST", "/auth/token", None),
    # the UI's session: open at the gateway, the function checks the cookie (then the /api/v2 route's role)
    ("POST", "/ui/session", None), ("DELETE", "/ui/api/v2/pools/{pool_name}", None),
])
def test_the_role_each_resource_needs_is_airflows(method, path, role) -> None:
    assert requirement(method, path).role == role


@pytest.mark.parametrize(("claim", "groups"), [
    ("OP,USER", ["OP", "USER"]), ("[OP USER]", ["OP", "USER"]), (["Viewer"], ["Viewer"]), ("", []), (None, []),
])
def test_group_claims_in_every_shape_api_gateway_passes_them(claim, groups) -> None:
    assert claim_list(claim) == groups


def test_a_user_has_their_highest_role_and_other_groups_grant_nothing() -> None:
    assert highest_role(["viewer", "Op", "data-team"]) is Role.OP  # FAB's spelling is the same role
    assert highest_role(["data-team"]) is None
