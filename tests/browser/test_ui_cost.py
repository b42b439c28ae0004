"""The run page shows what the run cost: `updraft local` runs its tries through the worker handler, each try records
what it used, and the page prices them (Updraft's /api/updraft routes through the session)."""

from __future__ import annotations

from tests.browser.browser_helpers import Page, api_call, until


def test_a_finished_run_shows_its_cost_in_dollars(signed_in: Page):
    page, p = signed_in, signed_in.page
    api_call(page.url, "PATCH", "dags/ui_smoke", {"is_paused": False})
    api_call(page.url, "POST", "dags/ui_smoke/dagRuns", {"dag_run_id": "costed", "logical_date": None, "conf": {}})
    until(lambda: api_call(page.url, "GET", "dags/ui_smoke/dagRuns/costed")["state"] == "success", timeout=120)
    cost = api_call(page.url, "GET", "/api/updraft/dags/ui_smoke/dagRuns/costed/cost")
    # Every try ran in a local worker process as the worker Lambda: each recorded its usage.
    assert cost["unmetered_tries"] == 0 and len(cost["tries"]) >= 3
    assert all(t["usd"] > 0 and t["seconds"] > 0 for t in cost["tries"])
    assert {"Lambda requests", "Lambda compute", "DynamoDB writes"} <= {line["name"] for line in cost["lines"]}

    page.goto("/dags/ui_smoke/runs/costed")
    box = p.get_by_label("Cost", exact=True)
    total = box.locator(".cost-total")
    total.wait_for()
    assert total.inner_text() == (f"${cost['usd']:.2f}" if cost["usd"] >= 0.01 else f"${cost['usd']:.6f}")
    box.get_by_text("By service").click()
    assert "Lambda compute" in box.locator("table.cost-lines").inner_text()
    p.wait_for_function("() => document.querySelector('section.cost')?.textContent.includes('last 7 days')")
    page.shot("cost-run-page")
