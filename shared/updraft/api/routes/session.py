"""``/ui/session``: the web UI signs in, asks who is signed in, and signs out (:mod:`updraft.api.auth.session`).

- ``POST`` with ``{"username", "password"}`` (JSON only: a cross-site form cannot send it without a preflight)
  logs in as ``POST /auth/token`` does and sets the HttpOnly session cookie; the token is in no body.
- ``GET`` answers the signed-in user's name and role and the CSRF token the page echoes on its changes, or
  nulls when the request has no valid session (the page then shows the login page: no error to log). Where
  every caller is admin (local mode without users, Airflow's ``simple_auth_manager_all_admins``) there is
  nothing to sign in with: a request without a valid session gets the all-admins session, cookie and all, as
  Airflow's all-admins mode lets its UI straight in. ``all_admins`` in the answer says so (no sign-out to offer).
- ``DELETE`` clears the cookie (no CSRF token needed: a page whose session expired can still sign out).

Public as routes (no role needed to ask): each checks the cookie itself.
"""

from __future__ import annotations

from typing import Any

from updraft.api.auth.session import (
    cleared_cookie,
    cookie_token,
    csrf_token,
    is_https,
    session_cookie,
    session_user,
    who,
)
from updraft.api.auth.tokens import all_admins, local_token
from updraft.api.routes.auth import UnsupportedMediaType, log_in
from updraft.api.routing import Call, Reply, RouteTable
from updraft.config import UpdraftConfig

routes = RouteTable(prefix="")

PATH = "/ui/session"


def _answer(token: str | None, claims: dict[str, str] | None, config: UpdraftConfig) -> dict[str, Any]:
    everyone = all_admins(config)
    if token is None or claims is None:
        return {"username": None, "role": None, "csrf_token": None, "all_admins": everyone}
    name, role = who(claims)
    return {"username": name, "role": role, "csrf_token": csrf_token(token), "all_admins": everyone}


@routes.post(PATH)
def open_session(call: Call) -> Reply:
    content_type = (call.request.header("Content-Type") or "").split(";")[0].strip().lower()
    if content_type != "application/json":
        raise UnsupportedMediaType("Unsupported Media Type")
    token = log_in(call)
    return Reply(200, _answer(token, session_user(call.services.config, token), call.services.config),
                 headers={"Set-Cookie": session_cookie(token, secure=is_https(call.request)),
                          "Cache-Control": "no-store"})


@routes.get(PATH)
def current_session(call: Call) -> Reply:
    config = call.services.config
    token = cookie_token(call.request)
    claims = session_user(config, token)
    if claims is None and all_admins(config):
        token = local_token()
        return Reply(200, _answer(token, session_user(config, token), config),
                     headers={"Set-Cookie": session_cookie(token, secure=is_https(call.request)),
                              "Cache-Control": "no-store"})
    return Reply(200, _answer(token, claims, config), headers={"Cache-Control": "no-store"})


@routes.delete(PATH)
def close_session(call: Call) -> Reply:
    return Reply(204, headers={"Set-Cookie": cleared_cookie(secure=is_https(call.request))})
