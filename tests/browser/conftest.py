"""The browser tier: Debian's Chromium, headless, driven by Playwright, against a real ``updraft local`` system.

One browser and one local system per module (starting each costs seconds; module scope, so the local system's
environment variables are restored before other tiers run); every test gets a fresh
browser context (no cookies or storage carried over) and a page that records console errors and uncaught
exceptions, which fail the test. Screenshots go to ``tests/browser/artifacts/`` (gitignored) for a human to look at.
Skipped, saying why, only when there is no Chromium to drive (checked before any system starts): ``make test``
and ``make install`` install it with apt, as root.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.browser_helpers import (
    BROKEN_DAG,
    CHROMIUM,
    FAILING_DAG,
    FLAGS,
    SMOKE_DAG,
    Browser,
    Page,
    SizedPage,
    local_system,
)

PROVIDERS_INFO = Path(__file__).resolve().parents[1] / "unit" / "requirements" / "providers.json"


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Every browser test needs Chromium: without it, skip before its fixtures start a system for nothing."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM}: `make test` (or `make install`) installs Debian's chromium package "
                    "with apt when run as root")


@pytest.fixture(scope="module")
def local_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``updraft local`` with the test DAGs (one broken file for the import errors banner), parsed and ready; the
    real provider wheels' infos, as the installer writes them beside the installed packages."""
    with local_system(tmp_path_factory.mktemp("ui"), {"ui_smoke.py": SMOKE_DAG, "ui_fails.py": FAILING_DAG,
                                                      "ui_broken.py": BROKEN_DAG},
                      parsed=2, env={"UPDRAFT_PROVIDERS_INFO": str(PROVIDERS_INFO)}) as url:
        yield url


@pytest.fixture(scope="module")
def browser(local_url: str) -> Iterator[Browser]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        # Playwright gives each launch a fresh --user-data-dir of its own (and refuses one in args).
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            yield Browser(chromium, local_url)
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.browser.new_context(viewport={"width": 1280, "height": 800}, timezone_id="Europe/Paris")
    context.set_default_timeout(30_000)
    wrapped = Page(context.new_page(), browser.url)
    try:
        yield wrapped
        assert wrapped.errors == [], wrapped.errors
        assert wrapped.csp_violations == [], wrapped.csp_violations
    finally:
        context.close()


@pytest.fixture
def sized_page(browser: Browser) -> Iterator[SizedPage]:
    """Pages at a viewport of the test's choosing, each in a fresh context (UTC), all closed after the test;
    ``sign_in`` opens a session first, as the login form would (all-admins mode opens one itself)."""
    contexts: list[Any] = []

    def make(width: int = 1280, height: int = 800, *, sign_in: bool = False, **options: Any) -> Page:
        context = browser.browser.new_context(viewport={"width": width, "height": height}, timezone_id="UTC",
                                              **options)
        contexts.append(context)
        context.set_default_timeout(30_000)
        if sign_in:
            answer = context.request.post(browser.url + "/ui/session", data={"username": "admin", "password": "admin"})
            assert answer.ok, answer.text()
        return Page(context.new_page(), browser.url)

    try:
        yield make
    finally:
        for context in contexts:
            context.close()


@pytest.fixture
def signed_in(page: Page) -> Page:
    """A page whose browser holds a session, as after the login page (the login test goes through the form):
    the context's requests share its cookies, so the HttpOnly session cookie lands where the form puts it."""
    answer = page.page.context.request.post(page.url + "/ui/session", data={"username": "admin", "password": "admin"})
    assert answer.ok, answer.text()
    return page
