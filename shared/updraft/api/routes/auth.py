"""``/auth/token``: Airflow's simple auth manager's token routes, for clients that log in before calling.

On AWS every request is authorized by API Gateway (IAM, SigV4) before it reaches the function, so these routes
issue nothing there (403, as Airflow answers ``GET /auth/token`` without ``simple_auth_manager_all_admins``).
In local mode every caller is admin, as with Airflow's ``simple_auth_manager_all_admins=True``: any username
and password get a token, and any ``Authorization`` header is accepted by every route.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from updraft.api.errors import Forbidden
from updraft.api.routing import Call, RouteTable

routes = RouteTable(prefix="")

LOCAL_USER = {"sub": "admin", "role": "ADMIN", "aud": "apache-airflow"}


def _local_token() -> str:
    """A bearer token in JWT form (unsigned: local mode checks none), so clients that decode it find Airflow's
    claims."""
    def part(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(LOCAL_USER)}."


def _issue(call: Call) -> dict[str, str]:
    if not call.services.config.local_compute:
        raise Forbidden("This environment's API authorizes requests with IAM (SigV4); it issues no tokens")
    return {"access_token": _local_token()}


@routes.post("/auth/token", status=201)
def create_token(call: Call) -> dict[str, str]:
    """Airflow's all-admins mode hands a token to anyone; the credentials sent (JSON or form) are not read."""
    return _issue(call)


@routes.get("/auth/token", status=201)
def get_token(call: Call) -> dict[str, str]:
    return _issue(call)


@routes.post("/auth/token/cli", status=201)
def create_cli_token(call: Call) -> dict[str, str]:
    """airflowctl's login."""
    return _issue(call)
