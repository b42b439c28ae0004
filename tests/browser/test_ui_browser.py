"""The whole loop a new user does in the browser, against ``updraft local``: sign in, list DAGs (with the import
errors banner), unpause, trigger with params, watch the grid turn green, open a failed try's log, see pools; a
VIEWER gets no trigger or clear buttons. Each page is saved as a screenshot in tests/browser/artifacts/."""

from __future__ import annotations

import json
import re

from tests.browser.browser_helpers import Page, api_call


def test_sign_in_then_the_dag_list_shows_dags_tags_and_import_errors(page: Page):
    page.goto("/dags")
    p = page.page
    p.wait_for_url(re.compile(r"/auth/login\?next=%2Fdags$"))  # no token yet: the login page first
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
    p.wait_for_function("document.querySelectorAll('table.dags tbody tr').length === 1")
    assert "search=smoke" in p.url
    p.get_by_label("Search DAGs").fill("")
    p.wait_for_function("document.querySelectorAll('table.dags tbody tr').length === 2")
    p.get_by_label("Tags").select_option("smoke")  # the tags filter, also kept in the URL
    p.wait_for_function("document.querySelectorAll('table.dags tbody tr').length === 1")
    assert "tags=smoke" in p.url and p.locator("table.dags tbody tr").get_attribute("data-dag-id") == "ui_smoke"
    p.get_by_label("Tags").select_option([])
    p.wait_for_function("document.querySelectorAll('table.dags tbody tr').length === 2")
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
    p.wait_for_function("document.querySelector('pre.log').textContent.includes('boom from the browser test')")
    assert "about to fail on purpose" in log.inner_text()
    assert p.get_by_role("tab", name="Try 1").get_attribute("aria-selected") == "true"
    assert "failed" in p.locator(".title .badge").inner_text()
    page.shot("06-failed-log")
    _clear_and_see_it_rerun(page)


def _clear_and_see_it_rerun(page: Page):
    """Clear the failed try from its page (Airflow's clearTaskInstances route): it reruns (try 2)."""
    p = page.page
    p.get_by_role("button", name="Clear", exact=True).click()
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


def test_a_viewer_gets_no_trigger_pause_or_clear(page: Page):
    claims = {"sub": "vera", "role": "VIEWER"}
    import base64

    part = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    page.page.context.add_init_script(f"localStorage.setItem('updraft.token', 'e30.{part}.')")
    p = page.page
    page.goto("/dags/ui_smoke")
    p.locator("table.grid, .grid-box p").first.wait_for()
    assert p.get_by_role("button", name="Trigger").count() == 0
    assert p.get_by_role("switch").is_disabled()
    assert p.locator("#who").inner_text().startswith("vera (VIEWER)")
    page.shot("08-viewer")


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
