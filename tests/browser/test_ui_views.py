"""The views beside the grid, on Airflow 3's paths, against ``updraft local``: the home dashboard, the DAG's tabs
(Runs with its durations, Tasks, Calendar, Backfills, Audit Log, Code, Details with doc_md), a task across runs,
a run's Gantt, the Browse lists, assets and providers. Each is drawn from what the API holds, and saved as a
screenshot at 390x844 and 1400x900 in tests/browser/artifacts/ (checked there: no page-wide sideways scroll)."""

from __future__ import annotations

import re

import pytest

from tests.browser.browser_helpers import Page, api_call, until

SIZES = {"phone": (390, 844), "desktop": (1400, 900)}


def shots(page: Page, name: str) -> None:
    """Both sizes' screenshots; at each the page itself never scrolls sideways (wide tables and charts scroll in
    their own box)."""
    p = page.page
    for size, (width, height) in SIZES.items():
        p.set_viewport_size({"width": width, "height": height})
        p.wait_for_timeout(50)
        page.shot(f"{name}-{size}")
        overflow = p.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"{name} at {size}: the page scrolls {overflow} px sideways"
    p.set_viewport_size({"width": 1280, "height": 800})


@pytest.fixture(scope="module")
def finished_runs(local_url: str) -> list[str]:
    """Two finished runs of ui_smoke and one failed run of ui_fails, for every view to draw."""
    api_call(local_url, "PATCH", "dags/ui_smoke", {"is_paused": False})
    api_call(local_url, "PATCH", "dags/ui_fails", {"is_paused": False})
    runs = [("ui_smoke", "views_1"), ("ui_smoke", "views_2"), ("ui_fails", "views_failed")]
    for dag_id, run_id in runs:
        api_call(local_url, "POST", f"dags/{dag_id}/dagRuns", {"dag_run_id": run_id, "logical_date": None})
    for dag_id, run_id in runs:
        until(lambda d=dag_id, r=run_id: api_call(local_url, "GET", f"dags/{d}/dagRuns/{r}")["state"]
              in ("success", "failed"), timeout=120)
    return [run_id for _, run_id in runs]


def test_home_dashboard_counts_runs_and_instances_by_state(signed_in: Page, finished_runs):
    page, p = signed_in, signed_in.page
    page.goto("/")
    history = p.get_by_role("region", name="History")
    history.wait_for()
    runs = history.get_by_label("Runs by state").inner_text()
    assert re.search(r"success\s+\d+", runs) and re.search(r"failed\s+\d+", runs)
    assert "metadatabase: healthy" in p.get_by_role("region", name="Health").inner_text()
    assert "default_pool" in p.get_by_role("region", name="Pool slots").inner_text()
    assert "ui_numbers" in p.get_by_role("region", name="Asset events").inner_text()
    assert re.search(r"^2\s*DAGs", p.locator(".stats").inner_text())
    shots(page, "view-home")


def test_dag_tabs_runs_tasks_and_audit_log(signed_in: Page, finished_runs):
    page, p = signed_in, signed_in.page
    page.goto("/dags/ui_smoke")
    p.get_by_role("navigation", name="DAG tabs").get_by_role("link", name="Runs").click()
    p.wait_for_url(re.compile(r"/dags/ui_smoke/runs$"))
    chart = p.get_by_role("img", name=re.compile(r"Durations of the last \d+ runs"))
    chart.wait_for()
    assert chart.locator("rect.bar").count() >= 2
    assert {"views_1", "views_2"} <= set(p.locator("tr[data-run-id]").evaluate_all("rs => rs.map(r => r.dataset.runId)"))
    p.get_by_label("State").select_option("failed")  # the filter, kept in the URL
    p.wait_for_url(re.compile(r"state=failed"))
    p.get_by_text("No runs.").wait_for()
    shots(page, "view-dag-runs")

    p.get_by_role("link", name="Tasks", exact=True).click()
    row = p.locator("tr[data-task-id=produce]")
    row.wait_for()
    operator = api_call(page.url, "GET", "dags/ui_smoke/tasks/produce")["operator_name"]
    assert row.locator("td").nth(1).inner_text() == operator and "square" in row.locator("td").nth(6).inner_text()
    shots(page, "view-dag-tasks")
    row.get_by_role("link", name="produce").click()
    p.wait_for_url(re.compile(r"/dags/ui_smoke/tasks/produce$"))
    p.get_by_role("img", name=re.compile(r"Durations of produce's last \d+ instances")).wait_for()
    shots(page, "view-task-durations")

    page.goto("/dags/ui_smoke/events")
    p.locator("table.list tbody tr").first.wait_for()
    events = p.locator("table.list tbody tr").evaluate_all(
        "rs => rs.map(r => [r.cells[1].textContent, r.cells[4].textContent])")
    assert {("trigger_dag_run", "views_1"), ("trigger_dag_run", "views_2")} <= {tuple(e) for e in events}
    assert set(p.locator("table.list tbody td:nth-child(3)").all_inner_texts()) <= {"ui_smoke", ""}
    shots(page, "view-dag-audit")


def test_code_tab_shows_the_dag_file_and_details_render_doc_md_safely(signed_in: Page):
    page, p = signed_in, signed_in.page
    page.goto("/dags/ui_smoke/code")
    source = p.get_by_role("region", name="DAG source")
    source.wait_for()
    text = source.inner_text()
    assert "def ui_smoke():" in text and "square.expand(x=values)" in text
    stored = api_call(page.url, "GET", "dagSources/ui_smoke")["content"]
    assert p.locator(".code-view li").count() == len(stored.rstrip("\n").split("\n"))  # a numbered row a line
    shots(page, "view-dag-code")

    page.goto("/dags/ui_fails/details")
    doc = p.get_by_role("region", name="Documentation")
    doc.wait_for()
    assert doc.locator("strong").inner_text() == "on purpose"
    assert doc.get_by_role("link", name="Airflow").get_attribute("href") == "https://airflow.apache.org/"
    assert doc.get_by_role("link", name="click").count() == 0  # a javascript: link stays text
    assert doc.locator("img").count() == 0 and "<img src=x" in doc.inner_text()  # HTML shows as text
    assert p.evaluate("window.injected") is None
    assert "Schedule" in p.locator("dl.details").inner_text()
    shots(page, "view-dag-details")


def test_calendar_and_gantt_are_drawn(signed_in: Page, finished_runs):
    page, p = signed_in, signed_in.page
    page.goto("/dags/ui_smoke/calendar")
    calendar = p.get_by_role("img", name=re.compile(r"Runs of \d{4} by day"))
    calendar.wait_for()
    assert calendar.locator("rect.day").count() >= 365
    today = calendar.locator("rect.state-success")
    assert today.count() >= 1 and "success" in today.first.locator("title").text_content()
    shots(page, "view-dag-calendar")

    page.goto("/dags/ui_smoke/runs/views_1/gantt")
    gantt = p.get_by_role("img", name="Gantt of run views_1")
    gantt.wait_for()
    tasks = set(gantt.locator("a.gantt-row").evaluate_all("rs => rs.map(r => r.dataset.task)"))
    assert {"produce", "checks.count", "checks.total", "square"} <= tasks
    assert gantt.locator("rect.run-bar.state-success").count() == gantt.locator("a.gantt-row").count()
    shots(page, "view-gantt")


def test_browse_lists_providers_and_assets(signed_in: Page, finished_runs):
    page, p = signed_in, signed_in.page
    page.goto("/dag_runs")
    p.locator("tr[data-run-id=views_failed]").wait_for()
    assert p.locator("tr[data-run-id=views_1]").count() == 1  # every DAG's runs in one list
    shots(page, "view-browse-runs")
    page.goto("/task_instances?state=failed")
    p.locator("table.list tbody tr").first.wait_for()
    assert set(p.locator("table.list tbody td:nth-child(3)").all_inner_texts()) == {"boom"}
    shots(page, "view-browse-task-instances")
    page.goto("/xcoms")
    p.locator("table.list tbody tr").first.wait_for()
    assert "return_value" in p.locator("table.list").inner_text()
    shots(page, "view-browse-xcoms")
    page.goto("/providers")
    p.locator("table.list tbody tr").first.wait_for()
    assert "apache-airflow-providers-amazon" in p.locator("table.list").inner_text()
    shots(page, "view-providers")
    page.goto("/assets")
    row = p.locator("table.list tbody tr", has_text="ui_numbers")
    row.wait_for()
    assert "ui_smoke.produce" in row.inner_text() and "s3://ui-bucket/numbers" in row.inner_text()
    shots(page, "view-assets")
    row.get_by_role("link", name="ui_numbers").click()
    p.wait_for_url(re.compile(r"/assets/\d+$"))
    lineage = p.get_by_role("region", name="Lineage")
    lineage.get_by_role("link", name="ui_smoke.produce").wait_for()  # the producing task, linked
    p.locator("table.list tbody tr").first.wait_for()  # an event a finished run's produce made
    assert p.get_by_role("link", name="ui_smoke.produce").count() >= 2
    shots(page, "view-asset")
