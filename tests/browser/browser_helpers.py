"""What the browser tier shares: how Chromium is launched, the test DAGs, a page that records errors, and API
calls for a test's setup (conftest holds only the fixtures: it is not importable by name)."""

from __future__ import annotations

import contextlib
import http.server
import json
import re
import shutil
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = Path(__file__).parent / "artifacts"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]

SMOKE_DAG = '''
from datetime import datetime
from airflow.sdk import Asset, Param, dag, task, task_group

@dag(schedule=None, start_date=datetime(2024, 1, 1), tags=["ui", "smoke"],
     params={"n": Param(2, type="integer", minimum=0, description="How many numbers"),
             "mode": Param("fast", enum=["fast", "slow"]), "verbose": Param(False, type="boolean")})
def ui_smoke():
    @task(outlets=[Asset("ui_numbers", uri="s3://ui-bucket/numbers")])
    def produce(params=None):
        print("producing", params["n"], params["mode"])
        return list(range(params["n"]))

    @task_group
    def checks(values):
        @task
        def count(values):
            return len(values)

        @task
        def total(values):
            return sum(values)

        count(values)
        return total(values)

    @task
    def square(x):
        print("squaring", x)
        return x * x

    values = produce()
    checks(values)
    square.expand(x=values)

ui_smoke()
'''

FAILING_DAG = '''
import logging
from datetime import datetime
from airflow.sdk import dag, task

@dag(schedule=None, start_date=datetime(2024, 1, 1), tags=["ui"])
def ui_fails():
    """Fails **on purpose**, see [Airflow](https://airflow.apache.org/), never [click](javascript:alert(1)) <img src=x onerror="window.injected=1">"""

    @task(retries=0)
    def boom():
        print("about to fail on purpose")
        logging.getLogger("ui_fails").warning("the input looks odd")
        raise ValueError("boom from the browser test")

    boom()

ui_fails()
'''

BROKEN_DAG = "from airflow.sdk import dag\nthis is not python\n"  # a NameError when imported


# The widths the layout rules are held at: a phone, a laptop and a desktop.
VIEWPORTS = [(390, 844), (1024, 768), (1400, 900)]


class Browser:
    """The shared Chromium and the local system's address."""

    def __init__(self, browser: Any, url: str) -> None:
        self.browser = browser
        self.url = url


# Every Content-Security-Policy violation a page sees, reported on its console (Playwright's init scripts run
# outside the page's policy) so a test fails on any, whatever Chromium's own message says.
CSP_LISTENER = """document.addEventListener("securitypolicyviolation", (e) =>
  console.error(`CSP violation: ${e.effectiveDirective} blocked ${e.blockedURI || "inline"} at ${e.sourceFile}`));"""


class Page:
    """One test's page: the Playwright page, the console errors and failed requests it saw (a test expects a
    refusal it provokes with :meth:`expect_refusal`), the Content-Security-Policy violations it saw (none
    expected: the UI runs under its policy), and screenshots by name."""

    def __init__(self, page: Any, url: str) -> None:
        self.page = page
        self.url = url
        self.errors: list[str] = []
        self.csp_violations: list[str] = []
        self.refusals: list[tuple[int, str]] = []  # (status, URL part) the test provokes on purpose
        page.add_init_script(CSP_LISTENER)
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.errors.append(f"page error: {exc}"))
        # Chromium's console names no URL for a failed load: record which request it was.
        page.on("response", self._response)

    def expect_refusal(self, status: int, url_part: str) -> None:
        self.refusals.append((status, url_part))

    def _console(self, msg: Any) -> None:
        if msg.type == "error" and msg.text.startswith("CSP violation:"):
            self.csp_violations.append(msg.text)
            return
        statuses = {status for status, _ in self.refusals}
        failed_load = re.match(r"Failed to load resource: the server responded with a status of (\d+)", msg.text)
        if msg.type == "error" and not (failed_load and int(failed_load.group(1)) in statuses):
            self.errors.append(f"console: {msg.text}")

    def _response(self, response: Any) -> None:
        if response.status >= 400 and not any(response.status == status and part in response.url
                                               for status, part in self.refusals):
            self.errors.append(f"HTTP {response.status}: {response.request.method} {response.url}")

    def goto(self, path: str) -> None:
        self.page.goto(self.url + path)

    def shot(self, name: str) -> Path:
        ARTIFACTS.mkdir(exist_ok=True)
        target = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(target), full_page=True)
        return target

    def check_layout(self, name: str, *, then: tuple[int, int] | None = None) -> None:
        """At each of ``VIEWPORTS``: a screenshot ``<name>-<width>x<height>``, and no layout rule broken (the
        first few problems of each viewport named). The page stays at the last viewport, or goes to ``then``."""
        from tests.browser.layout_rules import layout_problems

        broken = {}
        for width, height in VIEWPORTS:
            self.page.set_viewport_size({"width": width, "height": height})
            self.page.wait_for_timeout(50)
            self.shot(f"{name}-{width}x{height}")
            if problems := layout_problems(self.page):
                broken[f"{width}x{height}"] = problems[:8]
        if then is not None:
            self.page.set_viewport_size({"width": then[0], "height": then[1]})
        assert broken == {}


def api_call(url: str, method: str, path: str, body: Any = None) -> Any:
    """A call to the API as a test's setup (``path`` under /api/v2, or from the root when it starts with /)."""
    target = f"{url}{path}" if path.startswith("/") else f"{url}/api/v2/{path}"
    request = urllib.request.Request(target, method=method, data=None if body is None else
                                     json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        text = response.read()
    return json.loads(text) if text else None


def until(predicate: Callable[[], Any], timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        assert time.monotonic() < deadline, f"not true after {timeout} s"
        time.sleep(0.2)
    return value


@contextlib.contextmanager
def other_site() -> Iterator[str]:
    """The address of another site's page (an empty HTML page with no policy), at ``localhost``: to a browser
    another site than local mode's ``127.0.0.1``, on the loopback address too (Chromium lets no public page
    send requests to a loopback address, which would keep the attack from ever reaching the API)."""
    class Blank(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"<!doctype html><title>another site</title>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Blank)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://localhost:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


# The ``sized_page`` fixture: ``sized_page(width, height, *, sign_in=False, **context_options)`` is a page in a
# fresh UTC context of that viewport, closed after the test.
SizedPage = Callable[..., "Page"]


@contextlib.contextmanager
def local_system(root: Path, dag_files: dict[str, str], *, parsed: int, env: dict[str, str] | None = None,
                 plugins: dict[str, str] | None = None) -> Iterator[str]:
    """``updraft local`` on ``root``: the DAG files (name -> source, dedented) in ``root/dags``, the plugin files
    (relative path -> source) in ``root/plugins``, ``env`` set while it runs (and ``UPDRAFT_HOME`` under
    ``root``); yields the API's URL once ``parsed`` DAGs are listed, and stops the system after."""
    import textwrap

    import pytest

    from updraft.local.system import LocalOptions, LocalSystem

    dags = root / "dags"
    dags.mkdir()
    for name, text in dag_files.items():
        (dags / name).write_text(textwrap.dedent(text))
    plugins_folder = None
    if plugins:
        plugins_folder = root / "plugins"
        for relative, text in plugins.items():
            (plugins_folder / relative).parent.mkdir(parents=True, exist_ok=True)
            (plugins_folder / relative).write_text(textwrap.dedent(text))
    with pytest.MonkeyPatch.context() as patch:
        for name, value in {"UPDRAFT_HOME": str(root / "home"), **(env or {})}.items():
            patch.setenv(name, value)
        running = LocalSystem(LocalOptions(dags_folder=str(dags),
                                           plugins_folder=str(plugins_folder) if plugins_folder else None,
                                           tick_seconds=0.5, workers=2, sync_seconds=0.2, grace_seconds=0.0),
                              say=lambda line: None).start()
        try:
            url = running.api.url
            try:
                until(lambda: api_call(url, "GET", "dags")["total_entries"] == parsed, timeout=120)
            except AssertionError:
                raise AssertionError(f"the test DAGs were not parsed: {api_call(url, 'GET', 'importErrors')}") from None
            yield url
        finally:
            running.stop()
