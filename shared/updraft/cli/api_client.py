"""The CLI's road to an environment: Airflow's REST API, the same routes the official client and the UI call.

Commands that read or change an environment call :func:`api` and never the store: one code path whether the
environment is local mode (its API Gateway on 127.0.0.1) or deployed (API Gateway on AWS). Errors come back as
one ``Error: ...`` line carrying the API's ``detail``, as airflowctl prints them.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode

import click

from updraft.cli.environments import Environments, chosen_name
from updraft.cli.signers import Signer, bearer, signer_for
from updraft.local.endpoint import LocalEndpoint, NotRunning

PAGE = 100  # Airflow's default maximum page size


class EnvironmentUnreachable(ConnectionError):
    """No answer at the API's address (not a CLI usage error: ``--verbose`` shows the traceback)."""


class ApiCallFailed(click.ClickException):
    """An API answer other than 2xx: its status and Airflow's ``detail``, as one CLI error line."""

    def __init__(self, status: int, detail: Any) -> None:
        self.status = status
        self.detail = detail
        # A string detail is Airflow's own sentence ("Dag with dag_id: 'x' not found"), printed as it is; the
        # status helps with the rest (a 422's issue list, a server error, a refused credential).
        text = detail if isinstance(detail, str) else json.dumps(detail)
        if status == 401:
            text += " (HTTP 401: log in with `updraft login`, or check the environment's --auth)"
        elif status == 403 or status >= 500 or not isinstance(detail, str):
            text += f" (HTTP {status})"
        super().__init__(text)


def path_of(*segments: str) -> str:
    """``/api/v2/...`` with each segment percent-encoded (run ids hold ``:`` and ``+``)."""
    return "/api/v2/" + "/".join(quote(segment, safe="") for segment in segments)


def updraft_path_of(*segments: str) -> str:
    """``/api/updraft/...`` (Updraft's own routes, apart from Airflow's), each segment percent-encoded."""
    return "/api/updraft/" + "/".join(quote(segment, safe="") for segment in segments)


@dataclass
class ApiClient:
    base_url: str  # scheme://host[:port][/stage], without /api/v2
    signer: Signer | None = None
    timeout: float = 60.0
    _opener: urllib.request.OpenerDirector = field(default_factory=urllib.request.build_opener, repr=False)

    def request(self, method: str, path: str, *, params: dict[str, Any] | None = None, body: Any = None) -> Any:
        """The parsed JSON answer (``None`` for an empty one); :class:`ApiCallFailed` for a non-2xx status."""
        url = self.base_url.rstrip("/") + path
        query = [(k, v) for k, value in (params or {}).items() if value is not None
                 for v in (value if isinstance(value, (list, tuple)) else [value])]
        if query:
            url += "?" + urlencode([(k, _text(v)) for k, v in query])
        data = b"" if body is None else json.dumps(body).encode()
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        if self.signer is not None:
            headers = self.signer(method, url, headers, data)
        request = urllib.request.Request(url, data=data if body is not None else None, method=method,
                                         headers=headers)
        try:
            with self._opener.open(request, timeout=self.timeout) as response:
                raw = response.read()
                _warn(response.headers.get_all("Warning") or [])
        except urllib.error.HTTPError as err:
            raw = err.read()
            raise ApiCallFailed(err.code, _detail(raw, err.reason)) from None
        except urllib.error.URLError as err:
            raise EnvironmentUnreachable(f"Could not connect to the environment's API at {self.base_url}: "
                                         f"{err.reason}") from err
        return json.loads(raw) if raw else None

    def get(self, path: str, **params: Any) -> Any:
        return self.request("GET", path, params=params)

    def post(self, path: str, body: Any = None, **params: Any) -> Any:
        return self.request("POST", path, params=params, body=body if body is not None else {})

    def patch(self, path: str, body: Any, **params: Any) -> Any:
        return self.request("PATCH", path, params=params, body=body)

    def put(self, path: str, body: Any, **params: Any) -> Any:
        return self.request("PUT", path, params=params, body=body)

    def delete(self, path: str, **params: Any) -> Any:
        return self.request("DELETE", path, params=params)

    def pages(self, path: str, key: str, **params: Any) -> Iterator[dict[str, Any]]:
        """Every entry of a paged collection (``{key: [...], "total_entries": n}``), page by page."""
        offset = 0
        while True:
            page = self.get(path, limit=PAGE, offset=offset, **params)
            entries = page.get(key) or []
            yield from entries
            offset += len(entries)
            if not entries or offset >= page.get("total_entries", 0):
                return


def _warn(values: list[str]) -> None:
    """An HTTP ``Warning`` header (``199 - "text"``): what the server wants the user to know about a success."""
    for value in values:
        text = value.split('"', 1)[1].rsplit('"', 1)[0] if value.count('"') >= 2 else value
        click.echo(f"[WARN] {text}", err=True)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _detail(raw: bytes, reason: str) -> Any:
    try:
        body = json.loads(raw)
    except ValueError:
        return raw.decode(errors="replace").strip() or reason
    if isinstance(body, dict):
        return body.get("detail", body.get("error", body))
    return body


def api(ctx: click.Context) -> ApiClient:
    """The chosen environment's API client, made once per invocation.

    ``--env NAME`` / ``UPDRAFT_ENV`` / ``updraft env use NAME`` pick an environment of ``environments.json``
    (signed as it says: :func:`updraft.cli.signers.signer_for`); with none chosen, the running local system
    (its address is in ``local.json``).
    """
    config = ctx.find_root().obj
    client: ApiClient | None = getattr(config, "api", None)
    if client is None:
        name = chosen_name(ctx)
        if name is not None:
            env = Environments.load().get(name)
            client = ApiClient(env.url, signer_for(name, env))
        else:
            token = Environments.load().local_token
            client = ApiClient(local_api_url(), bearer(token) if token else None)
        config.api = client
    return client


def local_api_url() -> str:
    """The running local system's API; when none runs, one line saying so and what else there is."""
    try:
        endpoint = LocalEndpoint.read()
    except NotRunning as err:
        envs = Environments.load()
        hint = f"; or choose an environment with --env NAME ({envs.known()})" if envs.environments else ""
        raise click.ClickException(f"{err}{hint}") from None
    if not endpoint.api_url:
        raise click.ClickException("the running local Updraft serves no API; restart it with `updraft local`")
    return endpoint.api_url
