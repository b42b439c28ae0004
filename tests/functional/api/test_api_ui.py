"""The web UI's routes in the API Lambda: every Airflow 3 UI path answers the app shell, whose asset URLs are
relative to the page (so the same HTML works under API Gateway's stage prefix), and assets are served with their
content type, cached as immutable only under the current version. API routes are never shadowed."""

from __future__ import annotations

import json
import re

import pytest

from tests.functional.lambda_helpers import lambda_context
from updraft.local.api_gateway import proxy_event
from updraft.ui import assets


@pytest.fixture(scope="module")
def call():
    """The API's resolver with every route; no services: a UI route (and /version) never builds them."""
    from updraft.api.app import build_app

    def no_services():
        raise AssertionError("a UI route touched the store")

    app = build_app(no_services)

    def send(path: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
        response = app.resolve(proxy_event("GET", path, headers or {}, b""), lambda_context("api"))
        headers = {k: v[-1] for k, v in (response.get("multiValueHeaders") or {}).items()}
        headers.update(response.get("headers") or {})
        return response["statusCode"], headers, response.get("body") or ""

    return send


@pytest.mark.parametrize(("path", "base"), [
    ("/", "."), ("/dags", "."), ("/dags/etl", ".."), ("/dags/etl/runs/manual__2024-01-01T00%3A00%3A00%2B00%3A00", "../../.."),
    ("/dags/etl/runs/r1/tasks/extract", "../../../../.."), ("/dags/etl/runs/r1/tasks/extract/mapped/2", "../../../../../../.."),
    ("/pools", "."), ("/auth/login", ".."), ("/variables", "."), ("/connections", "."), ("/events", "."),
])
def test_every_ui_path_answers_the_shell_with_assets_relative_to_the_page(call, path, base):
    status, headers, body = call(path)
    assert status == 200
    assert headers["Content-Type"] == "text/html; charset=utf-8" and headers["Cache-Control"] == "no-cache"
    assert f'content="{base}"' in body
    assert f'src="{base}/static/{assets.version()}/app.js"' in body and "{{" not in body


def test_assets_have_their_content_type_and_are_immutable_under_the_current_version(call):
    version = assets.version()
    status, headers, body = call(f"/static/{version}/app.js")
    assert status == 200 and headers["Content-Type"] == "text/javascript; charset=utf-8"
    assert headers["Cache-Control"] == "public, max-age=31536000, immutable" and "render()" in body
    assert call(f"/static/{version}/style.css")[1]["Content-Type"] == "text/css; charset=utf-8"
    assert call(f"/static/{version}/favicon.svg")[1]["Content-Type"] == "image/svg+xml"
    # A page loaded before a deploy asks for the old version: today's file, not cached.
    status, headers, _ = call("/static/000000000000/app.js")
    assert status == 200 and headers["Cache-Control"] == "no-cache"
    assert call(f"/static/{version}/nope.js")[0] == 404
    assert call(f"/static/{version}/shell.html")[0] == 404  # the shell is a page, not an asset


def test_every_module_the_app_imports_is_served(call):
    """The browser resolves each ``import ... from "./x.js"`` next to the importing asset."""
    version = assets.version()
    for name in [p.name for p in assets.STATIC.glob("*.js")]:
        status, _, body = call(f"/static/{version}/{name}")
        assert status == 200, name
        for imported in re.findall(r'from "\./([\w.-]+)"', body):
            assert call(f"/static/{version}/{imported}")[0] == 200, (name, imported)


def test_the_shell_preloads_every_module_the_app_imports_statically_and_no_module_loaded_on_demand(call):
    """A cold browser fetches the first page's modules at once (not level by level as it finds their imports); the
    modules a page loads when needed (the search, the graph's library, the tabs) stay out of the first paint."""
    _, _, body = call("/dags/etl")
    preloaded = re.findall(rf'<link rel="modulepreload" href="\.\./static/{assets.version()}/([\w.-]+\.js)">', body)
    sources = {p.name: p.read_text() for p in assets.STATIC.glob("*.js")}
    closure, todo = set(), ["app.js"]
    while todo:
        for name in re.findall(r'^import [^;]*?from "\./([\w.-]+)";', sources[todo.pop()], re.MULTILINE):
            if name not in closure:
                closure.add(name)
                todo.append(name)
    assert set(preloaded) == closure and len(preloaded) == len(closure)
    assert {"search.js", "dagre-3.1.3.js", "dagcode.js", "gantt.js"}.isdisjoint(preloaded)
    assert {"dag.js", "grid.js", "shortcuts.js", "view.js"} <= set(preloaded)


def test_api_routes_win_and_unknown_paths_stay_airflows_404(call):
    status, _, body = call("/api/v2/version")
    assert status == 200 and "version" in json.loads(body)
    status, _, body = call("/api/v2/dags/nope/nothing")
    assert status == 404 and json.loads(body)["error"] == "API route not found"
    assert call("/not-a-page")[0] == 404


def test_a_browser_navigating_to_a_path_no_page_has_gets_the_shell_and_its_in_app_404(call):
    """An Airflow UI link Updraft lacks (``/deadlines``, a DAG tab) or a mistyped one, opened in a browser: the app
    shell with status 404 (the UI draws its page-not-found); an API client asking the same path still gets JSON."""
    browser = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
    for path, base in (("/deadlines", "."), ("/dags/etl/nothing", "../.."), ("/a/b/c/d", "../../..")):
        status, headers, body = call(path, browser)
        assert status == 404 and headers["Content-Type"].startswith("text/html")
        assert f'<meta name="updraft-base" content="{base}">' in body
        assert "default-src 'self'" in headers["Content-Security-Policy"]  # the pages' policy
        assert json.loads(call(path)[2])["error"] == "API route not found"
    for path in ("/api/v2/nothing", "/ui/api/v2/nothing"):  # never a page under the API's prefixes
        status, headers, body = call(path, browser)
        assert status == 404 and json.loads(body)["error"] == "API route not found"
