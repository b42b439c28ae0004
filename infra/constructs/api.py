"""The REST API: two ways into the one API Lambda, IAM (SigV4) and bearer JWTs of a Cognito user pool.

API Gateway REST methods take one authorizer each, so the two ways in are two REST APIs over the same function
(and the same routes, at the same paths):

- ``<prefix>-api`` authorizes every method with IAM: automation and the CLI with AWS credentials sign requests
  with SigV4 (``execute-api:Invoke`` on this API in their own IAM policies). The function sees the signer in
  ``requestContext.identity.userArn`` and gives every IAM caller the environment's ``iam_caller_role``
  (``infra/config.py``; ADMIN by default: IAM policies already decide who may invoke this API at all).
- ``<prefix>-api-users`` authorizes with the user pool this construct creates: Airflow's official client,
  airflowctl and the UI send ``Authorization: Bearer <token>``, the token from ``POST /auth/token``
  (username and password; the function logs in with Cognito's ``InitiateAuth``). API Gateway's Cognito
  authorizer checks the token and passes its claims in ``requestContext.authorizer.claims``; the user's role
  is their highest group of ``VIEWER``, ``USER``, ``OP``, ``ADMIN`` (``updraft.api.auth``). The methods Airflow
  leaves open (the token routes, health, version: ``updraft.api.auth.policy.OPEN_METHODS``) have no
  authorizer. Without a valid token API Gateway answers 401 with Airflow's body. The web UI's pages are open
  (``GET /{proxy+}``: they hold no data), and so is its session, ``ANY /ui/{proxy+}``: the browser sends its
  token in an HttpOnly cookie, which a Cognito authorizer cannot read, so the function checks it as the
  authorizer would (``updraft.api.auth.session``; it needs the pool's id for that).

Why two APIs rather than one with a second resource tree (``/jwt/api/v2/...``) or stages (which share their
methods, so cannot differ in authorizer): each API serves Airflow's exact paths at its base URL, so every
Airflow client works unchanged against either, and neither way in can reach a method of the other. The function
trusts only what the authorizers write into the request context, never a header the caller sets.

The stack outputs both base URLs (``...RestApiEndpoint...``, ``...UsersApiEndpoint...``), the user pool's id and
the app client's id. No stage access logging: it needs the account-wide API Gateway CloudWatch role
(``AWS::ApiGateway::Account``), a singleton that one environment's stack must not own (``cloud_watch_role=False``).
The function's own log group records every request.
"""

from __future__ import annotations

import json

from aws_cdk import CfnOutput, RemovalPolicy
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cognito as cognito
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from updraft.api.auth.policy import OPEN_METHODS
from updraft.api.auth.roles import Role
from updraft.api.auth.session import SESSION_PREFIX
from updraft.api.headers import COMMON
from updraft.resources import ResourceNames

# API Gateway's own 401 (no token, or one its authorizer refuses) in Airflow's words, so clients parse it.
UNAUTHORIZED_TEMPLATE = json.dumps({"detail": "Not authenticated"})


class UpdraftApi(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, names: ResourceNames, handler: lambda_.Function,
                 iam_caller_role: str = "ADMIN", retain_users: bool = False) -> None:
        super().__init__(scope, construct_id)
        self.rest_api = apigw.LambdaRestApi(
            self, "RestApi", handler=handler, proxy=True, rest_api_name=f"{names.prefix}-api",
            description=f"Updraft {names.environment}: Airflow-style REST routes (IAM authorization)",
            cloud_watch_role=False,
            endpoint_types=[apigw.EndpointType.REGIONAL],
            deploy_options=apigw.StageOptions(stage_name=names.environment),
            default_method_options=apigw.MethodOptions(authorization_type=apigw.AuthorizationType.IAM))
        self._users(names, retain_users)
        self._users_api(names, handler)
        # What the function reads (updraft.config): the app client to log users in with, the IAM callers' role.
        handler.add_environment("UPDRAFT_USER_POOL_CLIENT_ID", self.user_pool_client.user_pool_client_id)
        handler.add_environment("UPDRAFT_USER_POOL_ID", self.user_pool.user_pool_id)
        handler.add_environment("UPDRAFT_IAM_CALLER_ROLE", iam_caller_role)

    def _users(self, names: ResourceNames, retain: bool) -> None:
        """The user pool (administrators add users: no self sign-up), a group per Airflow role, and the app
        client ``POST /auth/token`` logs in with: USER_PASSWORD_AUTH (``updraft.api.auth.cognito``; CDK always
        adds refresh-token auth), no secret, and no OAuth flow, scope or callback URL: the CLI, the UI and
        Airflow's clients all get their token from ``POST /auth/token``, never from Cognito's hosted UI."""
        self.user_pool = cognito.UserPool(
            self, "Users", user_pool_name=f"{names.prefix}-users", self_sign_up_enabled=False,
            sign_in_aliases=cognito.SignInAliases(username=True), sign_in_case_sensitive=False,
            account_recovery=cognito.AccountRecovery.NONE,
            removal_policy=RemovalPolicy.RETAIN if retain else RemovalPolicy.DESTROY)
        for role in Role:
            cognito.CfnUserPoolGroup(
                self, f"{role.name.capitalize()}Group", user_pool_id=self.user_pool.user_pool_id,
                group_name=role.name, precedence=len(Role) - role.value,  # a lower precedence wins in Cognito
                description=f"Airflow's {role.name} role")
        self.user_pool_client = self.user_pool.add_client(
            "ApiClient", user_pool_client_name=f"{names.prefix}-api", generate_secret=False,
            auth_flows=cognito.AuthFlow(user_password=True), prevent_user_existence_errors=True,
            # No OAuth at all: nothing uses the hosted UI's flows (CDK's defaults would allow the implicit and code
            # grants, every scope, and https://example.com as a redirect target).
            disable_o_auth=True)
        CfnOutput(self, "UserPoolId", value=self.user_pool.user_pool_id)
        CfnOutput(self, "UserPoolClientId", value=self.user_pool_client.user_pool_client_id)

    def _users_api(self, names: ResourceNames, handler: lambda_.IFunction) -> None:
        self.users_api = apigw.RestApi(
            self, "UsersApi", rest_api_name=f"{names.prefix}-api-users",
            description=f"Updraft {names.environment}: Airflow-style REST routes (Cognito user pool tokens)",
            cloud_watch_role=False, endpoint_types=[apigw.EndpointType.REGIONAL],
            deploy_options=apigw.StageOptions(stage_name=names.environment))
        self.authorizer = apigw.CognitoUserPoolsAuthorizer(
            self, "UsersAuthorizer", cognito_user_pools=[self.user_pool],
            authorizer_name=f"{names.prefix}-users", identity_source="method.request.header.Authorization")
        integration = apigw.LambdaIntegration(handler, allow_test_invoke=False)
        cognito_auth = apigw.AuthorizationType.COGNITO
        branches: dict[str, apigw.IResource] = {"": self.users_api.root}
        for method, path in sorted(OPEN_METHODS):
            resource = self.users_api.root.resource_for_path(path)
            resource.add_method(method, integration, authorization_type=apigw.AuthorizationType.NONE)
            parts = path.strip("/").split("/")
            for depth in range(1, len(parts) + 1):
                branches.setdefault("/".join(parts[:depth]), self.users_api.root.resource_for_path(
                    "/" + "/".join(parts[:depth])))
        # Every other path reaches the function behind the authorizer: a greedy {proxy+} under the root and
        # under each resource the open methods created (API Gateway resolves a path inside the deepest
        # matching resource, so each needs its own).
        # (add_resource rather than add_proxy: add_proxy under the root also adds an open MOCK method to it.)
        self.users_api.root.add_method("ANY", integration, authorization_type=cognito_auth,
                                       authorizer=self.authorizer)
        for branch, resource in branches.items():
            proxy = resource.add_resource("{proxy+}")
            proxy.add_method("ANY", integration, authorization_type=cognito_auth, authorizer=self.authorizer)
            if branch == "":
                # The web UI's pages and assets (``updraft.api.auth.policy.is_ui_path``): a browser loads them
                # with no token. Every path under /api and /auth resolves in its own branch above, behind the
                # authorizer, so this opens nothing of the API.
                proxy.add_method("GET", integration, authorization_type=apigw.AuthorizationType.NONE)
        # The UI's session (``updraft.api.auth.session.SESSION_PREFIX``): the function checks its cookie.
        self.users_api.root.add_resource(SESSION_PREFIX.strip("/")).add_resource("{proxy+}").add_method(
            "ANY", integration, authorization_type=apigw.AuthorizationType.NONE)
        self.users_api.add_gateway_response(
            "Unauthorized", type=apigw.ResponseType.UNAUTHORIZED, status_code="401",
            templates={"application/json": UNAUTHORIZED_TEMPLATE},
            # API Gateway's static header values are quoted with ' (which a CSP's keywords contain): the headers
            # without one (a JSON answer is no page: nosniff is what protects it).
            response_headers={name: f"'{value}'" for name, value in COMMON.items()})
