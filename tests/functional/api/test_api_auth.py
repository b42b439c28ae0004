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

# A value for each path parameter (any value: only the answer's 401/403-ness is read).
REFUSALS = ({"detail": "Not authenticated"}, {"detail": "Forbidden"})  # what authorization answers
PATH_VALUES = {"dag_id": "etl", "task_id": "extract", "map_index": "0", "try_number": "1", "import_error_id": "1"}


class Caller:
    """Requests as API Gateway delivers them: as a token user with ``groups``, by IAM, or anonymous."""

    def __init__(self, handler: Any) -> None:
        self.handler = handler

    def __call__(self, method: str, path: str, body: Any = None, *, groups: str | None = None, iam: bool = False,
                 content_type: str = "application/json", raw: str | None = None) -> Answer:
        claims = None if groups is None else {"cognito:username": "ana", "sub": "1", "cognito:groups": groups}
        data = raw if raw is not None else json.dumps(body) if body is not None else ""
        event = proxy_event(method, path, {"Content-Type": content_type}, data.encode(), claims=claims, iam=iam)
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
            yield provision_users(cognito, "updraft-test-users", {"olga": Role.OP, "vic": Role.VIEWER},
                                  {"olga": "olga-password", "vic": "vic-password"}, endpoint_url="unused",
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
    other = CognitoAuthorizer(UserPool("us-east-1_other", pool.client_id, "unused", REGION), keys=authorizer._keys)
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
