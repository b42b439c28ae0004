"""The Admin and Browse pages beside the DAGs, on Airflow 3's paths and in the header's menus where Airflow puts
them, against ``updraft local`` with a plugins folder and ``[api] expose_config`` on: Admin > Plugins (a plugin
with a timetable, a macro and a link, and a plugin file that fails to import), Admin > Config (masked secrets;
Airflow's refusal when not exposed), Browse > Jobs (the functions' heartbeats, and why there are no job rows), and
a DAG's Backfills tab (a backfill made with the Backfill form, paused, resumed, cancelled). Each page holds the
layout rules at 390x844, 1024x768 and 1400x900, with screenshots in tests/browser/artifacts/admin-*.png."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.browser_helpers import SMOKE_DAG, Browser, SizedPage, api_call, local_system, until

PLUGIN = '''
from airflow.plugins_manager import AirflowPlugin
from airflow.sdk import BaseOperatorLink
from airflow.timetables.trigger import CronTriggerTimetable


def shout(text):
    return text.upper()


class CompanyWorkdays(CronTriggerTimetable):
    pass


class RunbookLink(BaseOperatorLink):
    name = "Runbook"

    def get_link(self, operator, *, ti_key):
        return "https://runbook.example.com"


class CompanyPlugin(AirflowPlugin):
    name = "company"
    macros = [shout]
    timetables = [CompanyWorkdays]
    global_operator_extra_links = [RunbookLink()]
    external_views = [{"name": "Wiki", "href": "https://wiki.example.com", "destination": "nav"}]
'''

# A DAG a backfill has work in: daily, each try sleeping long enough that the backfill is still running while the
# test pauses, resumes and cancels it.
BACKFILL_DAG = '''
import time
from datetime import datetime
from airflow.sdk import dag, task

@dag(schedule="@daily", start_date=datetime(2024, 1, 1), catchup=False, tags=["ui"])
def ui_backfill():
    @task
    def slow():
        time.sleep(20)

    slow()

ui_backfill()
'''


@pytest.fixture(scope="module")
def local_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``updraft local`` with a plugins folder (one plugin, one broken file), the configuration exposed, and the
    smoke and backfill DAGs parsed (each parse reports the plugins folder)."""
    env = {"AIRFLOW__API__EXPOSE_CONFIG": "True",
           "AIRFLOW__SECRETS__BACKEND_KWARGS": '{"connections_prefix": "very-secret-prefix"}'}
    plugins = {"company/company_plugin.py": PLUGIN,
               "broken_plugin.py": "raise RuntimeError('this plugin needs a database')\n"}
    with local_system(tmp_path_factory.mktemp("ui-admin"), {"ui_smoke.py": SMOKE_DAG, "ui_backfill.py": BACKFILL_DAG},
                      parsed=2, env=env, plugins=plugins) as url:
        until(lambda: api_call(url, "GET", "plugins")["total_entries"] == 1, timeout=60)
        yield url


def _menu(p: Any, name: str, item: str) -> None:
    """Follow ``item`` of the header's ``name`` menu (Browse, Admin), as a user would."""
    header = p.get_by_role("navigation", name="Main")
    header.locator("summary", has_text=name).click()
    header.get_by_role("link", name=item, exact=True).click()


def test_admin_plugins_lists_each_plugin_with_what_it_provides_and_the_import_errors(sized_page: SizedPage):
    page = sized_page(1400, 900)
    p = page.page
    page.goto("/dags")
    p.locator("table.dags tbody tr").first.wait_for()
    _menu(p, "Admin", "Plugins")
    p.wait_for_url(re.compile(r"/plugins$"))
    row = p.locator("tr[data-plugin=company]")
    row.wait_for()
    text = row.inner_text()
    assert "$PLUGINS_FOLDER/company/company_plugin.py" in text
    assert "company_plugin.CompanyWorkdays" in text and "company_plugin.shout" in text
    assert "<company_plugin.RunbookLink object>" in text
    assert "Not used by Updraft: 1 external views" in text  # declared, and said to be unused
    errors = p.get_by_role("alert", name="Plugin Import Errors")
    assert "1 Plugin Import Error" in errors.inner_text()
    errors.locator("summary", has_text="broken_plugin.py").click()
    assert "this plugin needs a database" in errors.inner_text()
    page.check_layout("admin-plugins")
    assert page.errors == []


def test_admin_config_shows_the_options_with_secrets_hidden_or_airflow_s_refusal(sized_page: SizedPage):
    page = sized_page(1400, 900)
    p = page.page
    page.goto("/dags")
    p.locator("table.dags tbody tr").first.wait_for()
    _menu(p, "Admin", "Config")
    p.wait_for_url(re.compile(r"/configs$"))
    p.get_by_role("heading", name="Airflow Configuration").wait_for()
    table = p.locator("table.config")
    table.wait_for()
    rows = {tuple(r) for r in table.locator("tbody tr").evaluate_all(
        "rs => rs.map(r => [...r.cells].map(c => c.textContent))")}
    assert ("secrets", "backend_kwargs", "< hidden >") in rows and ("api", "expose_config", "True") in rows
    assert "very-secret-prefix" not in p.locator("main").inner_text()
    page.check_layout("admin-config")

    # Not exposed (Airflow's default): the page shows Airflow's refusal and the setting that lifts it.
    page.expect_refusal(403, "/ui/api/v2/config")
    p.route(re.compile(r"/ui/api/v2/config$"), lambda route: route.fulfill(status=403, json={
        "detail": "Your Airflow administrator chose not to expose the configuration, most likely for security "
                  "reasons."}))
    page.goto("/configs")
    p.get_by_role("alert").filter(has_text="chose not to expose the configuration").wait_for()
    assert "AIRFLOW__API__EXPOSE_CONFIG=True" in p.locator("main").inner_text()
    assert p.locator("table.config").count() == 0
    page.shot("admin-config-hidden-1400x900")
    assert page.errors == []


def test_browse_jobs_shows_the_functions_heartbeats_and_says_why_there_are_no_job_rows(sized_page: SizedPage):
    page = sized_page(1400, 900)
    p = page.page
    page.goto("/dags")
    p.locator("table.dags tbody tr").first.wait_for()
    _menu(p, "Browse", "Jobs")
    p.wait_for_url(re.compile(r"/jobs$"))
    assert "Updraft keeps no jobs" in p.get_by_role("note").inner_text()
    scheduler = p.locator("tr[data-job-type=SchedulerJob]")
    scheduler.wait_for()
    health = api_call(page.url, "GET", "monitor/health")
    assert health["scheduler"]["status"] == "healthy" and "healthy" in scheduler.inner_text()
    assert scheduler.locator("time").count() == 1  # its latest heartbeat
    assert p.locator("tr[data-job-type=DagProcessorJob] time").count() == 1
    triggerer = p.locator("tr[data-job-type=TriggererJob]").inner_text()
    assert "not running" in triggerer and "Step Functions" in triggerer
    page.check_layout("admin-jobs")
    assert page.errors == []


def test_backfills_tab_shows_a_backfill_made_with_the_form_and_pauses_resumes_and_cancels_it(sized_page: SizedPage):
    page = sized_page(1400, 900)
    p = page.page
    page.goto("/dags/ui_backfill")
    p.get_by_role("button", name="Backfill").click()
    form = p.get_by_role("form", name="Backfill")
    form.get_by_label("From").fill("2024-03-01T00:00:00")
    form.get_by_label("To").fill("2024-03-10T00:00:00")
    form.get_by_role("button", name="Backfill").click()
    made = form.get_by_role("status").filter(has_text=re.compile(r"Backfill \d+ created"))
    made.wait_for()
    backfill_id = re.search(r"Backfill (\d+)", made.inner_text()).group(1)  # type: ignore[union-attr]

    p.get_by_role("navigation", name="DAG tabs").get_by_role("link", name="Backfills").click()
    p.wait_for_url(re.compile(r"/dags/ui_backfill/backfills$"))
    row = p.locator("table.list tbody tr").filter(
        has=p.locator("td:first-child", has_text=re.compile(rf"^{backfill_id}$")))
    row.wait_for()
    cells = row.locator("td").all_inner_texts()
    assert cells[3] == "none" and cells[4] == "10" and cells[7] == "running"
    assert cells[1].startswith("2024-03-01") or "03/01/2024" in cells[1] or "01/03/2024" in cells[1]
    page.check_layout("admin-backfills")

    row.get_by_role("button", name="Pause").click()
    until(lambda: row.locator("td").nth(7).inner_text() == "paused", timeout=10)
    assert api_call(page.url, "GET", f"backfills/{backfill_id}")["is_paused"] is True
    row.get_by_role("button", name="Resume").click()
    until(lambda: row.locator("td").nth(7).inner_text() == "running", timeout=10)
    assert api_call(page.url, "GET", f"backfills/{backfill_id}")["is_paused"] is False
    row.get_by_role("button", name="Cancel").click()
    until(lambda: row.locator("td").nth(7).inner_text() == "completed", timeout=10)
    assert api_call(page.url, "GET", f"backfills/{backfill_id}")["completed_at"] is not None
    assert row.get_by_role("button").count() == 0  # nothing left to control
    page.shot("admin-backfills-cancelled-1400x900")
    assert page.errors == []


def test_the_header_menus_close_on_escape_and_when_the_other_opens(sized_page: SizedPage):
    page = sized_page(390, 844)
    p = page.page
    page.goto("/dags")
    p.locator("table.dags tbody tr").first.wait_for()
    header = p.get_by_role("navigation", name="Main")
    browse, admin = header.locator("details.menu", has_text="Browse"), header.locator("details.menu",
                                                                                         has_text="Admin")
    header.locator("summary", has_text="Browse").click()
    assert browse.get_attribute("open") is not None
    page.shot("admin-menu-browse-390x844")
    header.locator("summary", has_text="Admin").click()
    assert admin.get_attribute("open") is not None and browse.get_attribute("open") is None
    p.keyboard.press("Escape")
    assert admin.get_attribute("open") is None
    assert page.errors == []


def test_ctrl_k_searches_the_dags_and_enter_opens_the_one_chosen(sized_page: SizedPage):
    page = sized_page(1024, 768)
    p = page.page
    page.goto("/jobs")
    p.locator("tr[data-job-type=SchedulerJob]").wait_for()
    p.keyboard.press("Control+k")
    search = p.get_by_role("dialog", name="Search DAGs")
    box = search.get_by_role("combobox", name="Search DAGs")
    box.wait_for()
    assert p.evaluate("document.activeElement.getAttribute('role')") == "combobox"
    options = search.get_by_role("option")
    options.first.wait_for()
    assert set(options.evaluate_all("os => os.map(o => o.dataset.dagId)")) == {"ui_backfill", "ui_smoke"}
    box.fill("smo")
    until(lambda: options.evaluate_all("os => os.map(o => o.dataset.dagId)") == ["ui_smoke"], timeout=10)
    page.shot("admin-search-1024x768")
    p.keyboard.press("Enter")
    p.wait_for_url(re.compile(r"/dags/ui_smoke$"))
    assert search.count() == 0

    # The header's button opens it too; nothing matching says so; Escape closes it.
    p.get_by_role("button", name=re.compile("Search DAGs")).click()
    box.fill("no_such_dag")
    search.get_by_role("status").filter(has_text="No DAGs match.").wait_for()
    p.keyboard.press("Escape")
    search.wait_for(state="detached")
    assert page.errors == []


def test_a_task_group_in_a_run_from_the_grid_and_across_runs(sized_page: SizedPage, browser: Browser):
    url = browser.url
    api_call(url, "PATCH", "dags/ui_smoke", {"is_paused": False})
    api_call(url, "POST", "dags/ui_smoke/dagRuns", {"dag_run_id": "group_run", "logical_date": None})
    until(lambda: api_call(url, "GET", "dags/ui_smoke/dagRuns/group_run")["state"] == "success", timeout=120)
    api_call(url, "PATCH", "dags/ui_smoke", {"is_paused": True})
    page = sized_page(1400, 900)
    p = page.page
    page.goto("/dags/ui_smoke")
    p.get_by_label("checks in group_run").click()  # the group's cell in the grid
    p.wait_for_url(re.compile(r"/dags/ui_smoke/runs/group_run/tasks/group/checks$"))
    rows = p.locator("table.group-tis tbody tr")
    rows.first.wait_for()
    assert rows.evaluate_all("rs => rs.map(r => r.dataset.taskId)") == ["checks.count", "checks.total"]
    summary = p.get_by_role("region", name="Group state")
    assert re.search(r"success\s+2", summary.inner_text())
    page.check_layout("admin-task-group-run")
    p.set_viewport_size({"width": 1400, "height": 900})
    rows.first.get_by_role("link", name="count").click()
    p.wait_for_url(re.compile(r"/dags/ui_smoke/runs/group_run/tasks/checks\.count$"))
    p.go_back()
    p.get_by_role("link", name="The group across runs").click()
    p.wait_for_url(re.compile(r"/dags/ui_smoke/tasks/group/checks$"))
    tasks = p.locator("table.group-tasks tbody tr")
    tasks.first.wait_for()
    assert tasks.evaluate_all("rs => rs.map(r => r.dataset.taskId)") == ["checks.count", "checks.total"]
    page.check_layout("admin-task-group-dag")
    assert page.errors == []
