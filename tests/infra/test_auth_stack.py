"""The two ways into the API in the synthesized stack: the IAM API (test_stack.py) and the users API, a Cognito
user pool with Airflow's role groups and an authorizer on every method but the open ones."""

from __future__ import annotations

from tests.infra.cfn import function_id, of_type, render
from tests.infra.test_stack import NAMES, _env
from updraft.api.auth.policy import OPEN_METHODS


def _users_api(synth) -> str:
    (api,) = [k for k, v in of_type(synth.resources, "AWS::ApiGateway::RestApi").items()
              if v["Properties"]["Name"] == f"{NAMES.prefix}-api-users"]
    return api


def _paths(synth) -> dict[str, str]:
    """Resource logical id -> its path, rebuilt from the parents."""
    resources = of_type(synth.resources, "AWS::ApiGateway::Resource")

    def path(logical_id: str) -> str:
        props = resources[logical_id]["Properties"]
        parent = props["ParentId"]
        prefix = path(parent["Ref"]) if "Ref" in parent else ""
        return f"{prefix}/{props['PathPart']}"

    return {logical_id: path(logical_id) for logical_id in resources}


def test_user_pool_has_a_group_per_airflow_role_and_a_password_client(synth) -> None:
    synth.template.has_resource_properties("AWS::Cognito::UserPool", {
        "UserPoolName": f"{NAMES.prefix}-users",
        "AdminCreateUserConfig": {"AllowAdminCreateUserOnly": True}})
    groups = {g["Properties"]["GroupName"]: g["Properties"]["Precedence"]
              for g in of_type(synth.resources, "AWS::Cognito::UserPoolGroup").values()}
    assert groups == {"ADMIN": 1, "OP": 2, "USER": 3, "VIEWER": 4}  # the highest role has the lowest precedence
    ((client_id, client),) = of_type(synth.resources, "AWS::Cognito::UserPoolClient").items()
    assert "ALLOW_USER_PASSWORD_AUTH" in client["Properties"]["ExplicitAuthFlows"]
    assert not client["Properties"].get("GenerateSecret")
    env = _env(synth, "api")  # the function logs users in with this client, checks the UI's cookie with the pool
    assert env["UPDRAFT_USER_POOL_CLIENT_ID"] == f"<{client_id}>" and env["UPDRAFT_IAM_CALLER_ROLE"] == "ADMIN"
    (pool,) = of_type(synth.resources, "AWS::Cognito::UserPool")
    assert env["UPDRAFT_USER_POOL_ID"] == f"<{pool}>"


def test_app_client_allows_only_the_password_login_the_api_uses(synth) -> None:
    """Every token comes from ``POST /auth/token`` (``InitiateAuth`` with USER_PASSWORD_AUTH): the client allows
    that and refreshing its tokens, and none of Cognito's OAuth (hosted UI) flows, scopes or redirect URLs, which
    CDK's defaults would turn on (implicit and code grants, every scope, https://example.com)."""
    (client,) = of_type(synth.resources, "AWS::Cognito::UserPoolClient").values()
    props = client["Properties"]
    assert sorted(props["ExplicitAuthFlows"]) == ["ALLOW_REFRESH_TOKEN_AUTH", "ALLOW_USER_PASSWORD_AUTH"]
    assert not props.get("AllowedOAuthFlowsUserPoolClient")
    for oauth in ("AllowedOAuthFlows", "AllowedOAuthScopes", "CallbackURLs", "LogoutURLs"):
        assert not props.get(oauth), oauth


def test_users_api_checks_tokens_with_the_pool_except_on_the_open_methods(synth) -> None:
    api, fn = _users_api(synth), function_id(synth.resources, "api")
    ((authorizer_id, authorizer),) = of_type(synth.resources, "AWS::ApiGateway::Authorizer").items()
    (pool,) = of_type(synth.resources, "AWS::Cognito::UserPool")
    assert authorizer["Properties"]["Type"] == "COGNITO_USER_POOLS"
    assert render(authorizer["Properties"]["ProviderARNs"]) == [f"<{pool}.Arn>"]
    assert authorizer["Properties"]["IdentitySource"] == "method.request.header.Authorization"
    paths = _paths(synth)
    open_methods, protected = set(), set()
    for method in of_type(synth.resources, "AWS::ApiGateway::Method").values():
        props = method["Properties"]
        if props["RestApiId"] != {"Ref": api}:
            continue
        assert props["Integration"]["Type"] == "AWS_PROXY" and f"<{fn}.Arn>" in render(props["Integration"]["Uri"])
        path = paths.get(props["ResourceId"].get("Ref"), "/")
        if props["AuthorizationType"] == "NONE":
            open_methods.add((props["HttpMethod"], path))
        else:
            assert props["AuthorizationType"] == "COGNITO_USER_POOLS"
            assert props["AuthorizerId"] == {"Ref": authorizer_id}
            protected.add((props["HttpMethod"], path))
    # the web UI's pages, outside /api, and its session (the function checks its HttpOnly cookie)
    assert open_methods == set(OPEN_METHODS) | {("GET", "/{proxy+}"), ("ANY", "/ui/{proxy+}")}
    # every other path reaches the function behind the authorizer, in every branch the open methods create
    assert {("ANY", "/"), ("ANY", "/{proxy+}"), ("ANY", "/api/v2/{proxy+}"), ("ANY", "/auth/token/{proxy+}")
            } <= protected
    assert all(method == "ANY" and (path == "/" or path.endswith("/{proxy+}")) for method, path in protected)


def test_users_api_answers_a_missing_token_with_airflows_401(synth) -> None:
    synth.template.has_resource_properties("AWS::ApiGateway::GatewayResponse", {
        "ResponseType": "UNAUTHORIZED", "StatusCode": "401",
        "ResponseTemplates": {"application/json": '{"detail": "Not authenticated"}'},
        "ResponseParameters": {"gatewayresponse.header.X-Content-Type-Options": "'nosniff'",
                               "gatewayresponse.header.X-Frame-Options": "'DENY'",
                               "gatewayresponse.header.Referrer-Policy": "'no-referrer'"}})
