"""Airflow's four roles, ordered: each grants what the roles below it grant (the simple auth manager's
``SimpleAuthManagerRole``). Cognito groups name them, as Airflow's ``simple_auth_manager_users`` do (``VIEWER``,
``USER``, ``OP``, ``ADMIN``); FAB's role names (``Viewer``, ``User``, ``Op``, ``Admin``) are the same names in
another case, so a pool whose groups follow FAB's spelling works unchanged."""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable


class Role(enum.IntEnum):
    VIEWER = 0  # every read
    USER = 1  # + changes to DAGs, runs, task instances, XComs, backfills
    OP = 2  # + pools, variables, connections, configuration, assets
    ADMIN = 3  # everything


def role_named(name: str) -> Role | None:
    """The role a group or setting names (any case), or None for a name that is no role."""
    return Role.__members__.get(name.strip().upper())


def highest_role(groups: Iterable[str]) -> Role | None:
    """A user in several groups has the highest of their roles; groups that name no role grant nothing."""
    roles = [role for group in groups if (role := role_named(group)) is not None]
    return max(roles) if roles else None


def claim_list(value: object) -> list[str]:
    """A list-valued JWT claim as API Gateway passes it: a REST API's Cognito authorizer flattens arrays into a
    string (``"OP,USER"``; HTTP APIs write ``"[OP USER]"``); a list is taken as it is."""
    if isinstance(value, list | tuple):
        return [str(item) for item in value]
    if not isinstance(value, str):
        return []
    return [part for part in re.split(r"[\s,]+", value.strip().strip("[]")) if part]
