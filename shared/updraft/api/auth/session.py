"""The web UI's session: the user's token in an HttpOnly cookie that page script cannot read, and what a
request carrying it must also show before it may change anything.

Why not Airflow's way: Airflow 3's UI reads the ``_token`` cookie from script and sends it as a bearer header,
so script injected into a page could send the token elsewhere. Here the token never reaches script:

- ``POST /ui/session`` (:mod:`updraft.api.routes.session`) logs in and answers the token only as a
  ``Set-Cookie: _token=...; HttpOnly; SameSite=Strict`` (``Secure`` when the request came over https: API
  Gateway's ``X-Forwarded-Proto``; local mode is http on 127.0.0.1). The cookie has no ``Path``: a browser
  then keeps it for the folder of the login's URL, ``<root>/ui``, whatever prefix (API Gateway's stage, a
  proxy) is in front, so it goes with the session's requests only, never with a page or asset load.
- The browser calls the API at ``<root>/ui/api/v2/<route>`` (:data:`SESSION_API`): the same routes as
  ``/api/v2``, authenticated by the cookie. On AWS these paths are a method the users API leaves open
  (``infra/constructs/api.py``): API Gateway's Cognito authorizer reads a header, never a cookie, so the function
  checks the cookie's token itself (:func:`updraft.api.auth.tokens.pool_verifier`), exactly as the authorizer
  would, and writes its claims where the authorizer writes them. ``/api/v2`` itself still takes only
  ``Authorization: Bearer`` (the official client, airflowctl) or SigV4, and never a cookie.

Cross-site request forgery: a session request that is no read (any method but GET, HEAD and OPTIONS) must carry
``X-CSRF-Token`` equal to :func:`csrf_token` of its cookie's token, a digest the page gets from
``GET /ui/session`` (page script can read it; it reveals nothing of the token and is worth nothing without the
cookie). A cross-site page cannot read it, cannot compute it, and cannot send a custom header without a CORS
preflight the API never grants; ``SameSite=Strict`` keeps the cookie off cross-site requests besides. And any
request that is no read and that a browser marks as sent by another site (``Sec-Fetch-Site: cross-site`` or
``same-site``) is refused whatever its credentials (:func:`refuse_cross_site`), which also covers local mode's
all-admins API, where a request needs no credential at all. API clients send no ``Sec-Fetch-Site``.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
from typing import Any

from updraft.api.auth.roles import claim_list, highest_role
from updraft.api.auth.tokens import LOCAL_USER, all_admins, local_token, pool_verifier
from updraft.api.errors import Forbidden, Unauthorized
from updraft.api.request import Request
from updraft.api.routing import API_PREFIX
from updraft.config import UpdraftConfig

SESSION_COOKIE = "_token"  # Airflow's name for the UI's token cookie
CSRF_HEADER = "X-CSRF-Token"
SESSION_PREFIX = "/ui"  # the session's routes (/ui/session) and the API through it (/ui/api/v2/...)
SESSION_API = SESSION_PREFIX + API_PREFIX
READS = frozenset({"GET", "HEAD", "OPTIONS"})


def is_session_path(path: str) -> bool:
    return path == SESSION_PREFIX or path.startswith(SESSION_PREFIX + "/")


def cookie_token(request: Request) -> str | None:
    """The session token from the request's ``Cookie`` header (the last one of that name), or None."""
    found = None
    for name, value in request.headers.items():
        if name.lower() != "cookie":
            continue
        for pair in value.split(";"):
            key, sep, text = pair.strip().partition("=")
            if sep and key == SESSION_COOKIE and text:
                found = text
    return found


def csrf_token(token: str) -> str:
    """The value a session's changes must echo in ``X-CSRF-Token``: a digest of the session's token."""
    digest = hashlib.sha256(b"updraft-csrf\0" + token.encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def refuse_cross_site(request: Request) -> None:
    """403 for a change a browser says another site's page sent (its ``Sec-Fetch-Site``), whatever it carries."""
    site = (request.header("Sec-Fetch-Site") or "").strip().lower()
    if request.method not in READS and site in ("cross-site", "same-site"):
        raise Forbidden("Cross-site request refused")


def session_user(config: Any, token: str | None) -> dict[str, str] | None:
    """The claims of a valid session token, or None: the pool's ID token as API Gateway's authorizer would
    pass its claims; without a pool (local mode's all-admins), the all-admins token's claims."""
    if not token:
        return None
    if all_admins(config):
        return dict(LOCAL_USER) if hmac.compare_digest(token, local_token()) else None
    verifier = pool_verifier(config)
    return verifier.claims(token) if verifier is not None else None


def who(claims: dict[str, str]) -> tuple[str, str | None]:
    """The username and role name a session's claims give (what the UI shows, and what it hides buttons by)."""
    name = claims.get("cognito:username") or claims.get("username") or claims.get("sub") or ""
    role = highest_role(claim_list(claims.get("cognito:groups") or claims.get("role")))
    return name, role.name if role is not None else None


def through_session(request: Request, config: UpdraftConfig) -> Request:
    """A request to ``/ui/api/v2/...`` as the ``/api/v2/...`` request of the session's user: 401 without a
    valid session cookie, 403 for a change without the session's CSRF token. The claims go where API Gateway's
    authorizer puts them; without a pool (all-admins), the all-admins user's name and role, so the audit log
    names the user the UI shows as signed in."""
    token = cookie_token(request)
    claims = session_user(config, token)
    if token is None or claims is None:
        raise Unauthorized("Not authenticated")
    if request.method not in READS:
        sent = request.header(CSRF_HEADER) or ""
        if not hmac.compare_digest(sent.encode(), csrf_token(token).encode()):
            raise Forbidden("CSRF token missing or invalid")
    if all_admins(config):
        name, role = who(claims)
        claims = {"cognito:username": name, "cognito:groups": role or ""}
    context = {**request.context, "authorizer": {"claims": claims}}
    return dataclasses.replace(request, path=request.path[len(SESSION_PREFIX):], context=context)


def is_https(request: Request) -> bool:
    return (request.header("X-Forwarded-Proto") or "").strip().lower() == "https"


def session_cookie(token: str, *, secure: bool) -> str:
    """The ``Set-Cookie`` value that opens a session (no ``Path``: see the module's docstring)."""
    return f"{SESSION_COOKIE}={token}; HttpOnly; SameSite=Strict" + ("; Secure" if secure else "")


def cleared_cookie(*, secure: bool) -> str:
    """The ``Set-Cookie`` value that ends a session."""
    return f"{SESSION_COOKIE}=; Max-Age=0; HttpOnly; SameSite=Strict" + ("; Secure" if secure else "")
