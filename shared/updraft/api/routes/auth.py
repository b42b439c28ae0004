"""``/auth/token``: Airflow's simple auth manager's token routes, for clients that log in before calling.

With users (a Cognito user pool: on AWS always, in local mode with ``updraft local --users``), ``POST`` logs the
user in with the username and password sent (JSON or form, as Airflow reads them) and answers their JWT; the
users API's authorizer checks it on every later call. ``GET /auth/token`` (no credentials) is refused as Airflow
refuses it without ``simple_auth_manager_all_admins``.

Without users (local mode's default) every caller is admin, as with Airflow's ``simple_auth_manager_all_admins``:
any username and password get a token and ``GET`` gives one too; nothing checks it, since local mode's API
Gateway then lets every request in as its local IAM user.
"""

from __future__ import annotations

from urllib.parse import parse_qs

from updraft.api.auth.tokens import all_admins, local_token
from updraft.api.body import load_json
from updraft.api.errors import ApiError, BadRequest, Forbidden, Unprocessable, issue
from updraft.api.routing import Call, RouteTable

routes = RouteTable(prefix="")


class UnsupportedMediaType(ApiError):
    status = 415


def _credentials(call: Call) -> tuple[str, str]:
    """Username and password from a JSON or form body, as Airflow's ``parse_login_body`` reads them."""
    content_type = (call.request.header("Content-Type") or "application/json").split(";")[0].strip().lower()
    text = call.request.body or ""
    if content_type == "application/json":
        body = load_json(text) if text.strip() else {}
    elif content_type == "application/x-www-form-urlencoded":
        body = {name: values[-1] for name, values in parse_qs(text, keep_blank_values=True).items()}
    else:
        raise UnsupportedMediaType("Unsupported Media Type")
    if not isinstance(body, dict):
        raise Unprocessable([issue("model_type", ("body",), "Input should be a valid dictionary", body)])
    missing = [issue("missing", ("body", name), "Field required", body) for name in ("username", "password")
               if not isinstance(body.get(name), str)]
    if missing:
        raise Unprocessable(missing)
    if not body["username"] or not body["password"]:
        raise BadRequest("Username and password must be provided")
    return body["username"], body["password"]


def log_in(call: Call) -> str:
    """The token of the user whose credentials the request sends (any, where every caller is admin)."""
    if all_admins(call.services.config):
        return local_token()
    client_id = call.services.config.user_pool_client_id
    if not client_id:
        raise Forbidden("This environment has no user pool: its API authorizes requests with IAM (SigV4)")
    # lazy: cold start (the API's build imports every route module; Cognito only on log-in)
    from updraft.api.auth.cognito import log_in as cognito_log_in

    username, password = _credentials(call)
    return cognito_log_in(call.services.client("cognito-idp"), client_id, username, password)


@routes.post("/auth/token", status=201)
def create_token(call: Call) -> dict[str, str]:
    return {"access_token": log_in(call)}


@routes.get("/auth/token", status=201)
def get_token(call: Call) -> dict[str, str]:
    """A token without credentials: only where every caller is admin."""
    if not all_admins(call.services.config):
        raise Forbidden("This method is only allowed if ``[core] simple_auth_manager_all_admins`` is True")
    return {"access_token": local_token()}


@routes.post("/auth/token/cli", status=201)
def create_cli_token(call: Call) -> dict[str, str]:
    """airflowctl's login."""
    return {"access_token": log_in(call)}
