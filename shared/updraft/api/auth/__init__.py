"""Authorization of every API request, in one place, before the route runs (``updraft.api.app``).

:mod:`~updraft.api.auth.policy` says which role a route needs, :mod:`~updraft.api.auth.identity` who is calling
and with which role. The answers are Airflow's: 401 ``{"detail": "Not authenticated"}`` without credentials,
403 ``{"detail": "Forbidden"}`` for a role too low.
"""

from __future__ import annotations

from updraft.api.auth.identity import Identity, identify
from updraft.api.auth.policy import requirement
from updraft.api.auth.roles import Role, role_named
from updraft.api.errors import Forbidden, Unauthorized
from updraft.api.routing import Call, Route
from updraft.config import ConfigError, UpdraftConfig

__all__ = ["Identity", "Role", "authorize", "iam_caller_role"]


def iam_caller_role(config: UpdraftConfig) -> Role:
    """The role of every IAM (SigV4) caller, from ``UPDRAFT_IAM_CALLER_ROLE``."""
    role = role_named(config.iam_caller_role)
    if role is None:
        raise ConfigError(f"UPDRAFT_IAM_CALLER_ROLE must be one of {', '.join(Role.__members__)}, "
                          f"got {config.iam_caller_role!r}")
    return role


def authorize(route: Route, call: Call) -> Identity | None:
    """Refuse the call unless the caller's role reaches the route's; the caller's identity for a route that
    needs one, None for a public route (which reads no configuration: the health route stays cheap)."""
    need = requirement(route.method, route.path)
    if need.role is None:
        return None
    who = identify(call.request.context, iam_caller_role(call.services.config))
    if who.name is None:
        raise Unauthorized("Not authenticated")
    if who.role is None or who.role < need.role:
        raise Forbidden("Forbidden")
    return who
