"""Local mode's users: Airflow's ``simple_auth_manager_users`` in a Cognito user pool on the embedded AWS.

``updraft local --users "alice:VIEWER,bob:OP"`` takes Airflow's ``name:role`` list; passwords come from a JSON
file ``{"alice": "..."}`` (Airflow's ``simple_auth_manager_passwords_file``), and a user without one gets a
generated password, written to the file and printed once, as Airflow's simple auth manager does. The users go
into a user pool on moto's Cognito with one group per role, so ``POST /auth/token`` logs in through the same
``InitiateAuth`` call as on AWS, and local mode's API Gateway checks the tokens as the users API's Cognito
authorizer does (``updraft.local.api_gateway.CognitoAuthorizer``).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from updraft.api.auth.roles import Role, role_named
from updraft.api.auth.tokens import pool_issuer

# Airflow's generated-password alphabet (no look-alike characters).
_ALPHABET = "abcdefghkmnpqrstuvwxyzABCDEFGHKMNPQRSTUVWXYZ23456789"


def parse_users(spec: str) -> dict[str, Role]:
    """``name:role`` entries separated by commas (Airflow's ``[core] simple_auth_manager_users``)."""
    users: dict[str, Role] = {}
    for entry in (part.strip() for part in spec.split(",")):
        if not entry:
            continue
        parts = entry.split(":")
        if len(parts) == 3:
            raise ValueError(f"user {parts[0]!r} names teams ({parts[2]!r}): Updraft has no multi-team mode")
        if len(parts) != 2 or not parts[0]:
            raise ValueError(f"user entry {entry!r} is not 'name:role'")
        role = role_named(parts[1])
        if role is None:
            raise ValueError(f"user {parts[0]!r} has role {parts[1]!r}: expected one of {', '.join(Role.__members__)}")
        users[parts[0]] = role
    if not users:
        raise ValueError("no users given: expected 'name:role' entries, e.g. 'admin:ADMIN,viewer:VIEWER'")
    return users


def passwords_for(users: dict[str, Role], path: Path, say: Callable[[str], None]) -> dict[str, str]:
    """Each user's password from ``path``; the missing ones generated, saved there and printed."""
    passwords: dict[str, str] = json.loads(path.read_text() or "{}") if path.exists() else {}
    missing = [name for name in users if name not in passwords]
    for name in missing:
        passwords[name] = "".join(secrets.choice(_ALPHABET) for _ in range(16))
        say(f"Password for user '{name}': {passwords[name]}")
    if missing:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(passwords) + "\n")
        path.chmod(0o600)
    return passwords


@dataclass(frozen=True)
class UserPool:
    pool_id: str
    client_id: str
    endpoint_url: str
    region: str

    @property
    def issuer(self) -> str:
        """What Cognito (and moto's) writes in a token's ``iss``."""
        return pool_issuer(self.region, self.pool_id)

    @property
    def jwks_url(self) -> str:
        """The pool's signing keys, where moto's server publishes them (Cognito's: ``<issuer>/.well-known/...``)."""
        return f"{self.endpoint_url}/{self.pool_id}/.well-known/jwks.json"


def provision_users(cognito: Any, pool_name: str, users: dict[str, Role], passwords: dict[str, str], *,
                    endpoint_url: str, region: str) -> UserPool:
    """A user pool as the stack's (a group per role, an app client allowing USER_PASSWORD_AUTH), holding
    ``users``. Local mode calls it on every start, on an embedded AWS that starts empty."""
    # Cognito's loosest policy: Airflow's passwords (its generated ones too) need only be 6 characters long.
    policy = {"MinimumLength": 6, "RequireUppercase": False, "RequireLowercase": False, "RequireNumbers": False,
              "RequireSymbols": False}
    pool_id = cognito.create_user_pool(PoolName=pool_name, Policies={"PasswordPolicy": policy})["UserPool"]["Id"]
    client_id = cognito.create_user_pool_client(
        UserPoolId=pool_id, ClientName=f"{pool_name}-api", GenerateSecret=False,
        ExplicitAuthFlows=["ALLOW_USER_PASSWORD_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"])["UserPoolClient"]["ClientId"]
    for role in Role:
        cognito.create_group(UserPoolId=pool_id, GroupName=role.name, Precedence=len(Role) - role.value)
    for name, role in users.items():
        cognito.admin_create_user(UserPoolId=pool_id, Username=name, MessageAction="SUPPRESS")
        try:
            cognito.admin_set_user_password(UserPoolId=pool_id, Username=name, Password=passwords[name],
                                            Permanent=True)
        except cognito.exceptions.InvalidPasswordException:
            raise ValueError(f"the password of user {name!r} is shorter than 6 characters (Cognito's minimum)"
                             ) from None
        cognito.admin_add_user_to_group(UserPoolId=pool_id, Username=name, GroupName=role.name)
    return UserPool(pool_id, client_id, endpoint_url, region)
