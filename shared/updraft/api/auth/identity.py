"""Who is calling, from what API Gateway's authorizer wrote into the request context, never from a header.

Two ways in reach the API function (``infra/constructs/api.py``):

- a bearer JWT, checked by the users API's Cognito authorizer, which puts the token's claims in
  ``requestContext.authorizer.claims``: the user's role is their highest Cognito group that names one;
- SigV4, checked by the IAM API, which puts the signer in ``requestContext.identity.userArn``: IAM callers all
  have the environment's ``UPDRAFT_IAM_CALLER_ROLE`` (IAM policies already decide who may invoke the API).

A request with neither came through a method API Gateway leaves open (the token routes, health): anonymous.
Local mode's API Gateway (``updraft.local.api_gateway``) writes the same fields, so this code is the same there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from updraft.api.auth.roles import Role, claim_list, highest_role


@dataclass(frozen=True)
class Identity:
    name: str | None  # None: anonymous
    role: Role | None  # None: no role (anonymous, or a user in no role's group)
    via: str  # "jwt", "iam" or "anonymous"


ANONYMOUS = Identity(None, None, "anonymous")


def identify(context: dict[str, Any], iam_role: Role) -> Identity:
    claims = (context.get("authorizer") or {}).get("claims") or {}
    if claims:
        name = claims.get("cognito:username") or claims.get("username") or claims.get("sub")
        return Identity(str(name), highest_role(claim_list(claims.get("cognito:groups"))), "jwt")
    arn = (context.get("identity") or {}).get("userArn")
    if arn:
        return Identity(str(arn), iam_role, "iam")
    return ANONYMOUS
