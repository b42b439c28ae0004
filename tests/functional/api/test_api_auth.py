"""Roles on the API handler (moto): every route refuses a role below its own and lets its own through, with
Airflow's 401/403 bodies; ``POST /auth/token`` logs users in against a moto Cognito user pool."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.utilities.utils import load_resource

from tests.functional.api.conftest import BUCKET, REGION, TABLE, Answer, seed
from tests.functional.lambda_helpers import lambda_context
from updraft.api.auth.policy import requirement
from updraft.api.auth.roles import Role
from updraft.api.routes import all_routes
from updraft.local.api_gateway import CognitoAuthorizer, proxy_event
from updraft.local.users import UserPool, provision_users
from updraft.store.config import StoreConfig
from updraft.store.dynamo import DynamoStore
from updraft.store.tables import create_table

# The pool's users, one per role (olga and vic as the token tests' OP and VIEWER).
SESSION_USERS = {"vic": Role.VIEWER, "ulf": Role.USER, "olga": Role.OP, "ada": Role.ADMIN}
# A value for each path parameter (any value: only the answer's 401/403-ness is read).
REFUSALS = ({"detail": "Not authenticated"}, {"detail": "Forbidden"})  # what authorization answers
PATH_VALUES = {"dag_id": "etl", "task_id": "extract", "map_index": "0", "try_number": "1", "import_error_id": "1"}


class Caller:
    """Requests as API Gateway delivers them: as a token user with ``groups``, by IAM, or anonymous."""

    def __init__(self, handler: Any) -> None:
        self.handler = handler

    def __call__(self, method: str, path: str, body: Any = None, *, groups: str | None = None, iam: bool = False,
                 content_type: str = "application/json", raw: str | None = None,
                 headers: dict[str, str] | None = None) -> Answer:
        claims = None if groups is None else {"cognito:username": "ana", "sub": "1", "cognito:groups": groups}
        data = raw if raw is not None else json.dumps(body) if body is not None else ""
        event = proxy_event(method, path, {"Content-Type": content_type, **(headers or {})}, data.encode(),
                            claims=claims, iam=iam)
        response = self.handler.handler(event, lambda_context("api"))
        headers = {k: v[-1] for k, v in (response.get("multiValueHeaders") or {}).items()}
        headers.update(response.get("headers") or {})
        text = response.get("body")
        is_json = "json" in headers.get("Content-Type", "application/json")  # the UI's pages are HTML
        return Answer(response["statusCode"], (json.loads(text) if is_json else text) if text else None, headers)


@pytest.fixture(scope="module")
def environment():
    """One moto environment for the module (a table seeded as conftest's, and a user pool): each test uses
    its own pool and user names, so they share it (a fresh one costs ~3 s)."""
    with pytest.MonkeyPatch.context() as patch:
        for name, value in {"AWS_REGION": REGION, "UPDRAFT_TABLE": TABLE, "UPDRAFT_BUCKET": BUCKET}.items():
            patch.setenv(name, value)
        for name in ("UPDRAFT_LOCAL_COMPUTE", "UPDRAFT_SCHEDULER_FUNCTION", "AWS_ENDPOINT_URL",
                     "UPDRAFT_USER_POOL_CLIENT_ID", "UPDRAFT_IAM_CALLER_ROLE"):
            patch.delenv(name, raising=False)
        with mock_aws():
            boto3.client("s3", region_name=REGION).create_bucket(Bucket=BUCKET)
            config = StoreConfig(table_name=TABLE, region=REGION, s3_bucket=BUCKET)
            create_table(config)
            seed(DynamoStore(config))
            cognito = boto3.client("cognito-idp", region_name=REGION)
            yield provision_users(cognito, "updraft-test-users", SESSION_USERS,
                                  {name: f"{name}-password" for name in SESSION_USERS}, endpoint_url="unused",
                                  region=REGION)


@pytest.fixture
def call(environment, monkeypatch) -> Caller:
    from functions.api import handler

    monkeypatch.setattr("updraft.services._shared", None)  # built from this test's environment variables
    return Caller(handler)


def _target(method: str, path: str) -> str:
    """The route's path with values; a DELETE names a DAG that does not exist, so the module's DAGs outlive it
    (its answer is a 404 past authorization, which is all that is read)."""
    values = {**PATH_VALUES, "dag_id": "not_a_dag"} if method == "DELETE" else PATH_VALUES
    return re.sub(r"\{(\w+)\}", lambda m: values.get(m.group(1), "x"), path)


@pytest.mark.slow
def test_every_route_refuses_the_role_below_its_own_and_lets_its_own_in(call) -> None:
    """One handler, every route: anonymous is 401, the role below the route's 403, the route's own neither."""
    wrong = []
    # Reads first: a change let in (its role suffices) may delete what a later read names; only 401/403 count.
    for route in sorted(all_routes(), key=lambda r: r.method != "GET"):
        need = requirement(route.method, route.path)
        target, body = _target(route.method, route.path), {} if route.method in ("POST", "PATCH", "PUT") else None
        if need.role is None:
            if call(route.method, target, body).body in REFUSALS:
                wrong.append(f"{route.method} {route.path}: public, but refused anonymously")
            continue
        anonymous = call(route.method, target, body)
        if (anonymous.status, anonymous.body) != (401, {"detail": "Not authenticated"}):
            wrong.append(f"{route.method} {route.path}: anonymous got {anonymous.status}")
        if need.role > Role.VIEWER:
            below = call(route.method, target, body, groups=Role(need.role - 1).name)
            if (below.status, below.body) != (403, {"detail": "Forbidden"}):
                wrong.append(f"{route.method} {route.path}: {Role(need.role - 1).name} got {below.status}")
        own = call(route.method, target, body, groups=need.role.name)
        if own.body in REFUSALS:
            wrong.append(f"{route.method} {route.path}: {need.role.name} got {own.status} {own.body}")
    assert wrong == []


def test_a_viewer_cannot_trigger_a_user_can(call) -> None:
    trigger = {"logical_date": None, "dag_run_id": "by_a_user"}
    refused = call("POST", "/api/v2/dags/reporting/dagRuns", trigger, groups="VIEWER")
    assert (refused.status, refused.body) == (403, {"detail": "Forbidden"})
    assert call("GET", "/api/v2/dags/reporting/dagRuns/by_a_user", groups="VIEWER").status == 404  # not triggered
    assert call("POST", "/api/v2/dags/reporting/dagRuns", trigger, groups="USER").status == 200
    assert call("GET", "/api/v2/dags/reporting/dagRuns/by_a_user", groups="VIEWER").status == 200


def test_a_user_cannot_edit_pools_an_op_can(call) -> None:
    assert call("POST", "/api/v2/pools", {"name": "by_op", "slots": 2}, groups="USER").status == 403
    assert call("PATCH", "/api/v2/pools/default_pool", {"slots": 3}, groups="USER").status == 403
    assert call("POST", "/api/v2/pools", {"name": "by_op", "slots": 2}, groups="OP").status == 201
    assert call("GET", "/api/v2/pools/by_op", groups="VIEWER").body["slots"] == 2


def test_a_user_in_no_roles_group_is_forbidden_and_the_highest_group_counts(call) -> None:
    assert call("GET", "/api/v2/dags", groups="data-team").status == 403
    assert call("POST", "/api/v2/pools", {"name": "by_admin", "slots": 1}, groups="VIEWER,Admin").status == 201


def test_iam_callers_have_the_environments_iam_role(call, monkeypatch) -> None:
    assert call("POST", "/api/v2/pools", {"name": "by_iam", "slots": 1}, iam=True).status == 201  # ADMIN default
    monkeypatch.setenv("UPDRAFT_IAM_CALLER_ROLE", "VIEWER")
    monkeypatch.setattr("updraft.services._shared", None)
    assert call("DELETE", "/api/v2/pools/by_iam", iam=True).status == 403
    assert call("GET", "/api/v2/pools/by_iam", iam=True).status == 200


def test_the_public_routes_need_no_credentials(call) -> None:
    assert call("GET", "/api/v2/monitor/health").status == 200
    assert call("GET", "/api/v2/version").status == 200


# -- logging in with Cognito ---------------------------------------------------------------------------------

@pytest.fixture
def pool(environment, monkeypatch) -> UserPool:
    """The user pool (as the stack's: an OP and a VIEWER); the API function logs in with its client."""
    monkeypatch.setenv("UPDRAFT_USER_POOL_CLIENT_ID", environment.client_id)
    monkeypatch.setattr("updraft.services._shared", None)
    return environment


def _claims(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def test_post_auth_token_logs_in_with_cognito(call, pool) -> None:
    answer = call("POST", "/auth/token", {"username": "olga", "password": "olga-password"})
    assert answer.status == 201
    claims = _claims(answer.body["access_token"])
    assert (claims["cognito:username"], claims["cognito:groups"], claims["token_use"]) == ("olga", ["OP"], "id")
    form = call("POST", "/auth/token/cli", raw="username=vic&password=vic-password",
                content_type="application/x-www-form-urlencoded")
    assert form.status == 201 and _claims(form.body["access_token"])["cognito:groups"] == ["VIEWER"]


@pytest.mark.parametrize(("body", "status", "detail"), [
    ({"username": "olga", "password": "wrong"}, 401, "Invalid credentials"),
    ({"username": "nobody", "password": "olga-password"}, 401, "Invalid credentials"),
    ({"username": "olga", "password": ""}, 400, "Username and password must be provided"),
])
def test_post_auth_token_refuses_bad_credentials_as_airflow(call, pool, body, status, detail) -> None:
    answer = call("POST", "/auth/token", body)
    assert (answer.status, answer.body) == (status, {"detail": detail})


def test_post_auth_token_refuses_malformed_requests_and_get_gives_no_token(call, pool) -> None:
    missing = call("POST", "/auth/token", {"username": "olga"})
    assert missing.status == 422 and missing.body["detail"][0]["loc"] == ["body", "password"]
    assert call("POST", "/auth/token", raw="olga", content_type="text/plain").status == 415
    refused = call("GET", "/auth/token")
    assert refused.status == 403 and "simple_auth_manager_all_admins" in refused.body["detail"]


def test_the_gateways_authorizer_accepts_the_pools_tokens_only(call, pool) -> None:
    """Local mode's stand-in for API Gateway's Cognito authorizer, on a token of the pool (moto's keys)."""
    authorizer = CognitoAuthorizer(pool, keys=load_resource("cognitoidp/resources/jwks-public.json"))
    token = call("POST", "/auth/token", {"username": "vic", "password": "vic-password"}).body["access_token"]
    claims = authorizer.claims(f"Bearer {token}")
    assert claims is not None and claims["cognito:groups"] == "VIEWER" and claims["cognito:username"] == "vic"
    assert authorizer.claims(token) == claims  # the bare token, as API Gateway also takes it
    head, _payload, signature = token.split(".")
    forged = base64.urlsafe_b64encode(json.dumps({**_claims(token), "cognito:groups": ["ADMIN"]}).encode())
    assert authorizer.claims(f"{head}.{forged.decode().rstrip('=')}.{signature}") is None
    other = CognitoAuthorizer(UserPool("us-east-1_other", pool.client_id, "unused", REGION), keys=authorizer.verifier._keys)
    assert other.claims(token) is None  # another pool's token
    assert authorizer.claims(None) is None and authorizer.claims("Bearer ") is None


def test_the_sample_cognito_event_triggers_as_its_users_group_allows(call) -> None:
    """``events/api/trigger_dag_run_cognito.json``: a trigger through the users API, as API Gateway's Cognito
    authorizer delivers it (claims as strings, the groups flattened)."""
    event = json.loads((Path(__file__).resolve().parents[3] / "events" / "api" / "trigger_dag_run_cognito.json"
                        ).read_text())
    claims = event["requestContext"]["authorizer"]["claims"]
    as_viewer = {**event, "requestContext": {**event["requestContext"],
                                             "authorizer": {"claims": {**claims, "cognito:groups": "VIEWER"}}}}
    assert call.handler.handler(as_viewer, lambda_context("api"))["statusCode"] == 403
    assert call.handler.handler(event, lambda_context("api"))["statusCode"] == 200


# -- the web UI's session: the token in an HttpOnly cookie, changes with a CSRF token ------------------------

@pytest.fixture
def session_pool(pool, monkeypatch, tmp_path) -> UserPool:
    """The pool as the deployed function sees it (its id; its signing keys, moto's, from a file here)."""
    jwks = tmp_path / "jwks.json"
    jwks.write_text(json.dumps(load_resource("cognitoidp/resources/jwks-public.json")))
    monkeypatch.setenv("UPDRAFT_USER_POOL_ID", pool.pool_id)
    monkeypatch.setenv("UPDRAFT_USER_POOL_JWKS_URL", jwks.as_uri())
    monkeypatch.setattr("updraft.services._shared", None)
    return pool


def _sign_in(call, username: str) -> tuple[str, str]:
    """The ``Cookie`` header a browser sends after the UI's login, and the session's CSRF token."""
    answer = call("POST", "/ui/session", {"username": username, "password": f"{username}-password"})
    assert answer.status == 200, answer.body
    token = answer.headers["Set-Cookie"].split(";")[0].split("=", 1)[1]
    return f"theme=dark; _token={token}", answer.body["csrf_token"]


def _signed(claims: dict[str, Any], header: dict[str, Any] | None = None) -> str:
    """A token signed with moto's key (the pool's), with these claims."""
    from joserfc import jwk, jwt

    key = jwk.RSAKey.import_key(load_resource("cognitoidp/resources/jwks-private.json"))
    return jwt.encode(header or {"alg": "RS256", "kid": "dummy"}, claims, key)


def test_the_ui_login_sets_an_httponly_strict_cookie_and_answers_no_token(call, session_pool) -> None:
    answer = call("POST", "/ui/session", {"username": "olga", "password": "olga-password"})
    cookie = answer.headers["Set-Cookie"]
    name, _, rest = cookie.partition("=")
    token, *attributes = rest.split("; ")
    assert name == "_token" and _claims(token)["cognito:username"] == "olga"
    # no Path: the browser keeps it for <root>/ui, the session's folder; no Secure over http (local mode)
    assert attributes == ["HttpOnly", "SameSite=Strict"]
    assert token not in json.dumps(answer.body)
    assert answer.body == {"username": "olga", "role": "OP", "csrf_token": answer.body["csrf_token"],
                           "all_admins": False}
    https = call("POST", "/ui/session", {"username": "vic", "password": "vic-password"},
                 headers={"X-Forwarded-Proto": "https"})  # API Gateway's header: always https on AWS
    assert https.headers["Set-Cookie"].endswith("; HttpOnly; SameSite=Strict; Secure")
    wrong = call("POST", "/ui/session", {"username": "olga", "password": "nope"})
    assert (wrong.status, wrong.body) == (401, {"detail": "Invalid credentials"}) and "Set-Cookie" not in wrong.headers
    form = call("POST", "/ui/session", raw="username=olga&password=olga-password",
                content_type="application/x-www-form-urlencoded")  # what a cross-site form could send
    assert form.status == 415 and "Set-Cookie" not in form.headers


def test_the_session_says_who_is_signed_in_and_sign_out_clears_the_cookie(call, session_pool) -> None:
    cookie, csrf = _sign_in(call, "vic")
    assert call("GET", "/ui/session", headers={"Cookie": cookie}).body == {
        "username": "vic", "role": "VIEWER", "csrf_token": csrf, "all_admins": False}
    signed_out = call("GET", "/ui/session")  # with users, no cookie is no session (the login page follows)
    assert signed_out.body == {"username": None, "role": None, "csrf_token": None, "all_admins": False}
    assert "Set-Cookie" not in signed_out.headers
    out = call("DELETE", "/ui/session", headers={"Cookie": cookie})
    assert out.status == 204 and out.headers["Set-Cookie"] == "_token=; Max-Age=0; HttpOnly; SameSite=Strict"


def test_where_every_caller_is_admin_the_session_opens_itself_without_a_sign_in(call, monkeypatch) -> None:
    """Local mode without users (Airflow's ``simple_auth_manager_all_admins``): asking who is signed in, with no
    cookie or a stale one, opens the all-admins session (its cookie, its CSRF token), so the UI goes straight in."""
    monkeypatch.setenv("UPDRAFT_LOCAL_COMPUTE", "/tmp/updraft-test-compute.sock")
    monkeypatch.setattr("updraft.services._shared", None)
    for headers in ({}, {"Cookie": "_token=stale.from.before"}):
        answer = call("GET", "/ui/session", headers=headers)
        assert answer.status == 200
        assert {k: answer.body[k] for k in ("username", "role", "all_admins")} == {
            "username": "admin", "role": "ADMIN", "all_admins": True}
        cookie = answer.headers["Set-Cookie"]
        assert cookie.endswith("; HttpOnly; SameSite=Strict") and answer.body["csrf_token"]
        token = cookie.split(";")[0]
        again = call("GET", "/ui/session", headers={"Cookie": token})  # the cookie now holds: nothing new set
        assert again.body == answer.body and "Set-Cookie" not in again.headers
        created = call("POST", "/ui/api/v2/pools", {"name": "from_the_session", "slots": 1},
                       headers={"Cookie": token, "X-CSRF-Token": answer.body["csrf_token"]},
                       iam=True)  # local mode's gateway lets every request in as its IAM user
        assert created.status in (201, 409), created.body
    logs = call("GET", "/api/v2/eventLogs", iam=True).body["event_logs"]
    assert [(e["owner"], e["event"]) for e in logs][-1] == ("admin", "post_pool")  # the user the UI names


@pytest.mark.slow
def test_every_route_through_the_session_needs_the_role_it_needs_with_a_token(call, session_pool) -> None:
    """The role matrix again, through ``/ui/api/v2`` with each role's session cookie (and its CSRF token)."""
    sessions = {role: _sign_in(call, name) for name, role in SESSION_USERS.items()}
    wrong = []
    for route in sorted(all_routes(), key=lambda r: r.method != "GET"):
        if not route.path.startswith("/api/v2/"):
            continue
        need = requirement(route.method, route.path)
        target = "/ui" + _target(route.method, route.path)
        body = {} if route.method in ("POST", "PATCH", "PUT") else None
        anonymous = call(route.method, target, body)  # the session's paths: no session, no answer (public too)
        if (anonymous.status, anonymous.body) != (401, {"detail": "Not authenticated"}):
            wrong.append(f"{route.method} {route.path}: anonymous got {anonymous.status}")
        if need.role is None:
            cookie, csrf = sessions[Role.VIEWER]
            if call(route.method, target, body, headers={"Cookie": cookie, "X-CSRF-Token": csrf}).status != 200:
                wrong.append(f"{route.method} {route.path}: public, but refused to a session")
            continue
        for role in ([Role(need.role - 1)] if need.role > Role.VIEWER else []) + [need.role]:
            cookie, csrf = sessions[role]
            answer = call(route.method, target, body, headers={"Cookie": cookie, "X-CSRF-Token": csrf})
            refused = (answer.status, answer.body) == (403, {"detail": "Forbidden"})
            if refused != (role < need.role) or answer.status == 401:
                wrong.append(f"{route.method} {route.path}: {role.name} got {answer.status} {answer.body}")
    assert wrong == []


@pytest.mark.slow
def test_a_session_cookie_holding_anything_but_a_valid_token_of_the_pool_is_refused(call, session_pool) -> None:
    cookie, _csrf = _sign_in(call, "vic")
    token = cookie.split("_token=")[1]
    claims = _claims(token)
    head, _payload, signature = token.split(".")
    forged = base64.urlsafe_b64encode(json.dumps({**claims, "cognito:groups": ["ADMIN"]}).encode()).decode()
    unsigned = base64.urlsafe_b64encode(json.dumps({"alg": "none", "typ": "JWT"}).encode()).decode().rstrip("=")
    refused = {
        "forged": f"{head}.{forged.rstrip('=')}.{signature}",
        "alg none": f"{unsigned}.{token.split('.')[1]}.",
        "expired": _signed({**claims, "exp": 1_000_000, "iat": 999_000}),
        "another pool": _signed({**claims, "iss": claims["iss"].rsplit("/", 1)[0] + "/us-east-1_other"}),
        "an access token": _signed({**claims, "token_use": "access"}),
        "garbage": "not-a-token",
    }
    assert call("GET", "/ui/api/v2/dags", headers={"Cookie": f"_token={_signed(claims)}"}).status == 200  # signing ok
    answers = {what: call("GET", "/ui/api/v2/dags", headers={"Cookie": f"_token={value}"}).status
               for what, value in refused.items()}
    assert answers == dict.fromkeys(refused, 401)
    assert call("GET", "/ui/session", headers={"Cookie": f"_token={refused['forged']}"}).body["username"] is None


def test_a_change_through_the_session_needs_its_csrf_token(call, session_pool) -> None:
    """The cookie alone (what a cross-site form or script gets the browser to send) changes nothing."""
    cookie, csrf = _sign_in(call, "olga")
    other_cookie, other_csrf = _sign_in(call, "ada")
    pool_body = {"name": "by_session", "slots": 2}
    for headers in ({"Cookie": cookie}, {"Cookie": cookie, "X-CSRF-Token": "guess"},
                    {"Cookie": cookie, "X-CSRF-Token": other_csrf}):
        answer = call("POST", "/ui/api/v2/pools", pool_body, headers=headers)
        assert (answer.status, answer.body) == (403, {"detail": "CSRF token missing or invalid"})
    assert call("GET", "/api/v2/pools/by_session", groups="VIEWER").status == 404  # nothing was created
    cross_site = call("POST", "/ui/api/v2/pools", pool_body,
                      headers={"Cookie": cookie, "X-CSRF-Token": csrf, "Sec-Fetch-Site": "cross-site"})
    assert (cross_site.status, cross_site.body) == (403, {"detail": "Cross-site request refused"})
    made = call("POST", "/ui/api/v2/pools", pool_body,
                headers={"Cookie": cookie, "X-CSRF-Token": csrf, "Sec-Fetch-Site": "same-origin"})
    assert made.status == 201 and made.body["slots"] == 2
    assert call("GET", "/ui/api/v2/pools/by_session", headers={"Cookie": other_cookie}).status == 200  # reads: none
    logs = call("GET", "/api/v2/eventLogs", groups="VIEWER").body["event_logs"]
    assert [(e["owner"], e["event"]) for e in logs][-1] == ("olga", "post_pool")  # audited as the session's user


def test_bearer_and_iam_callers_need_no_csrf_token_and_the_api_takes_no_cookie(call, session_pool) -> None:
    cookie, csrf = _sign_in(call, "ada")
    assert call("POST", "/api/v2/pools", {"name": "by_bearer", "slots": 1}, groups="OP").status == 201
    assert call("DELETE", "/api/v2/pools/by_bearer", iam=True).status == 204
    # /api/v2 is behind API Gateway's authorizers: a cookie there is nobody (here: what reaches the function)
    only_cookie = call("POST", "/api/v2/pools", {"name": "by_cookie", "slots": 1},
                       headers={"Cookie": cookie, "X-CSRF-Token": csrf})
    assert (only_cookie.status, only_cookie.body) == (401, {"detail": "Not authenticated"})
    # any change a browser marks as another site's is refused, whoever sends it (local mode's all-admins API)
    cross_site = call("POST", "/api/v2/pools", {"name": "by_cross_site", "slots": 1}, iam=True,
                      headers={"Sec-Fetch-Site": "cross-site"})
    assert (cross_site.status, cross_site.body) == (403, {"detail": "Cross-site request refused"})
    assert call("GET", "/api/v2/pools", iam=True, headers={"Sec-Fetch-Site": "cross-site"}).status == 200


@pytest.mark.parametrize(("path", "page"), [
    ("/dags", True), ("/auth/login", True), ("/api/v2/version", False), ("/api/v2/dags", False),
    ("/api/v2/no/such/route", False), ("/ui/session", False),
])
def test_every_answer_carries_a_content_security_policy_and_refuses_framing(call, path, page) -> None:
    answer = call("GET", path)
    policy = dict(part.strip().split(" ", 1) for part in answer.headers["Content-Security-Policy"].split(";"))
    assert policy["frame-ancestors"] == "'none'" and policy["base-uri"] == "'none'"
    assert policy["default-src"] == ("'self'" if page else "'none'")
    if page:  # the UI's pages run their own files only: no inline script or style, no eval, no plugin
        assert (policy["script-src"], policy["style-src"], policy["object-src"]) == ("'self'", "'self'", "'none'")
        assert "unsafe" not in answer.headers["Content-Security-Policy"]
    assert (answer.headers["X-Frame-Options"], answer.headers["X-Content-Type-Options"],
            answer.headers["Referrer-Policy"]) == ("DENY", "nosniff", "no-referrer")
