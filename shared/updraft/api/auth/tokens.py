"""Checking a user pool's ID token as API Gateway's Cognito authorizer checks it, where no authorizer does.

Two places check a token themselves: local mode's API Gateway (its stand-in for the users API's authorizer,
``updraft.local.api_gateway``) and the API function for the web UI's session cookie
(:mod:`updraft.api.auth.session`), which reaches the function on a method API Gateway leaves open, so no
authorizer has seen it. Both accept exactly what the authorizer accepts: an RS256 JWT signed by one of the
pool's keys, issued by the pool, for its app client, an ID token, unexpired. Anything else (a forged signature,
``alg: none``, another pool's token, an expired one) gives no claims.

The pool's keys are fetched once per process from its JWKS address (Cognito publishes them at
``<issuer>/.well-known/jwks.json``; local mode's moto at its own address) and kept: Cognito's keys do not rotate.

Without a pool (local mode's default, Airflow's ``simple_auth_manager_all_admins``) every caller is admin and
the token ``POST /auth/token`` answers is :func:`local_token`: unsigned, since nothing checks it.
"""

from __future__ import annotations

import base64
import functools
import json
import threading
import urllib.request
from typing import Any

from updraft.config import UpdraftConfig

# The claims of local mode's all-admins token (Airflow's simple auth manager's, for clients that decode it).
LOCAL_USER = {"sub": "admin", "role": "ADMIN", "aud": "apache-airflow"}


def local_token() -> str:
    """The all-admins bearer token in JWT form (``alg: none``: local mode checks none)."""
    def part(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(LOCAL_USER)}."


def all_admins(config: UpdraftConfig) -> bool:
    """Local mode without users: every caller is admin, as with Airflow's ``simple_auth_manager_all_admins``."""
    return bool(config.local_compute) and not config.user_pool_client_id


def pool_issuer(region: str, pool_id: str) -> str:
    """What Cognito writes in a token's ``iss``."""
    return f"https://cognito-idp.{region}.amazonaws.com/{pool_id}"


class TokenVerifier:
    """The claims of a pool's valid ID token, as API Gateway passes them to the function (strings; a list
    joined with commas), or None for anything else."""

    def __init__(self, issuer: str, client_id: str, jwks_url: str, keys: dict[str, Any] | None = None) -> None:
        self.issuer = issuer
        self.client_id = client_id
        self.jwks_url = jwks_url
        self._keys = keys
        self._lock = threading.Lock()

    def _key_set(self) -> Any:
        from joserfc.jwk import KeySet

        with self._lock:
            if self._keys is None:
                with urllib.request.urlopen(self.jwks_url, timeout=10) as answer:
                    self._keys = json.load(answer)
            return KeySet.import_key_set(self._keys)  # type: ignore[arg-type]

    def claims(self, token: str | None) -> dict[str, str] | None:
        from joserfc import jwt
        from joserfc.errors import JoseError

        if not token:
            return None
        try:
            decoded = jwt.decode(token, self._key_set(), algorithms=["RS256"])
            jwt.JWTClaimsRegistry(iss={"essential": True, "value": self.issuer},
                                  aud={"essential": True, "value": self.client_id},
                                  token_use={"essential": True, "value": "id"},
                                  exp={"essential": True}).validate(decoded.claims)
        except (JoseError, ValueError):
            return None
        return {name: ",".join(map(str, value)) if isinstance(value, list) else str(value)
                for name, value in decoded.claims.items()}


@functools.cache
def _verifier(issuer: str, client_id: str, jwks_url: str) -> TokenVerifier:
    return TokenVerifier(issuer, client_id, jwks_url)


def pool_verifier(config: UpdraftConfig) -> TokenVerifier | None:
    """The process's verifier of the environment's pool (its keys fetched once), or None without a pool."""
    if not (config.user_pool_id and config.user_pool_client_id and config.region):
        return None
    issuer = pool_issuer(config.region, config.user_pool_id)
    return _verifier(issuer, config.user_pool_client_id,
                     config.user_pool_jwks_url or f"{issuer}/.well-known/jwks.json")
