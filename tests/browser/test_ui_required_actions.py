"""Human-in-the-loop requests in the UI, against ``updraft local`` running real HITL operators: Browse > Required
Actions lists each run's waiting requests (Airflow's ``/required_actions``, its Pending filter kept in the URL),
each links to its task instance's page, where the form answers it (an approval's buttons; a choice with params);
the answer resumes the task, and the request then shows what was chosen, by whom; a DAG's Required Actions tab and
a run's list show theirs. A VIEWER sees no form. Each page
holds the layout rules at 390x844, 1024x768 and 1400x900 (screenshots: artifacts/hitl-*.png)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from tests.browser.browser_helpers import SizedPage, api_call, local_system, until

HITL_DAG = '''
from datetime import datetime
from airflow.sdk import DAG, Param
from airflow.providers.standard.operators.hitl import ApprovalOperator, HITLOperator

with DAG("ui_hitl", schedule=None, start_date=datetime(2024, 1, 1), tags=["ui"]):
    ApprovalOperator(task_id="approve", subject="Ship release 42?", body="The **release notes** are ready.")
    HITLOperator(task_id="pick", subject="Which region first?", options=["eu", "us", "ap"], defaults=["eu"],
                 params={"batch": Param(10, type="integer", description="Rows per batch")})
'''


@pytest.fixture(scope="module")
def local_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with local_system(tmp_path_factory.mktemp("ui-hitl"), {"ui_hitl.py": HITL_DAG}, parsed=1) as url:
        yield url


@pytest.fixture(scope="module")
def waiting(local_url: str) -> str:
    """A run of ui_hitl whose two requests wait for an answer."""
    api_call(local_url, "PATCH", "dags/ui_hitl", {"is_paused": False})
    api_call(local_url, "POST", "dags/ui_hitl/dagRuns", {"dag_run_id": "asks", "logical_date": None})
    until(lambda: api_call(local_url, "GET", "dags/~/dagRuns/~/hitlDetails")["total_entries"] == 2, timeout=120)
    return "asks"


def _ti_state(url: str, task_id: str) -> str:
    return api_call(url, "GET", f"dags/ui_hitl/dagRuns/asks/taskInstances/{task_id}")["state"]


def test_a_viewer_sees_the_request_but_no_form(sized_page: SizedPage, waiting: str):
    """The role the session names hides the form (local mode's all-admins API would take the answer, so the
    session's answer is a VIEWER's here)."""
    page = sized_page()
    p = page.page
    # A session cookie for the API calls (as the conftest's signed_in), then the session's answer replaced.
    answer = p.context.request.post(page.url + "/ui/session", data={"username": "admin", "password": "admin"})
    assert answer.ok, answer.text()
    viewer = {"username": "vera", "role": "VIEWER", "csrf_token": "unused"}
    p.route("**/ui/session", lambda route: route.fulfill(json=viewer) if route.request.method == "GET"
            else route.fallback())
    page.goto(f"/dags/ui_hitl/runs/{waiting}/tasks/approve/required_actions")
    section = p.get_by_role("region", name="Required action")
    section.get_by_text("Waiting for a response.").wait_for()
    assert "Ship release 42?" in section.inner_text() and section.get_by_role("button").count() == 0
    assert page.errors == [] and page.csp_violations == []


def test_required_actions_lists_the_requests_and_the_form_answers_them(sized_page: SizedPage, waiting: str):
    page = sized_page()
    p = page.page
    page.goto("/dags")
    header = p.get_by_role("navigation", name="Main")
    header.locator("summary", has_text="Browse").click()
    header.get_by_role("link", name="Required Actions").click()
    p.wait_for_url(re.compile(r"/required_actions$"))
    rows = p.locator("tr[data-task-id]")
    rows.nth(1).wait_for()
    assert rows.count() == 2
    approve_row = p.locator("tr[data-task-id=approve]").inner_text()
    assert "Ship release 42?" in approve_row and "Approval Required" in approve_row and "asks" in approve_row
    assert "Choice Required" in p.locator("tr[data-task-id=pick]").inner_text()
    page.check_layout("hitl-list", then=(1280, 800))

    # The approval: its subject links to its task instance's request, answered with a button.
    p.locator("tr[data-task-id=approve]").get_by_role("link", name="Ship release 42?").click()
    p.wait_for_url(re.compile(r"/dags/ui_hitl/runs/asks/tasks/approve/required_actions$"))
    section = p.get_by_role("region", name="Required action")
    section.get_by_role("button", name="Approve").wait_for()
    assert "release notes" in section.locator("strong").inner_text()  # the body's Markdown
    page.check_layout("hitl-approval-form", then=(1280, 800))
    section.get_by_role("button", name="Approve").click()
    section.get_by_text("Approval Received").wait_for()
    assert "admin" in section.inner_text() and "Approve" in section.get_by_role("definition").first.inner_text()
    until(lambda: _ti_state(page.url, "approve") == "success", timeout=60)

    # The choice with a param, from the list's Pending filter (kept in the URL).
    page.goto("/required_actions")
    p.get_by_label("Response").select_option("false")
    p.wait_for_url(re.compile(r"response_received=false"))
    until(lambda: p.locator("tr[data-task-id]").count() == 1)
    p.locator("tr[data-task-id=pick]").get_by_role("link", name="pick").click()
    form = p.get_by_role("form", name="Respond: Which region first?")
    form.wait_for()
    assert form.get_by_label("eu").is_checked()  # the default
    form.get_by_label("us").check()
    form.get_by_label("batch").fill("25")
    page.check_layout("hitl-choice-form", then=(1280, 800))
    form.get_by_role("button", name="Respond").click()
    section = p.get_by_role("region", name="Required action")
    section.get_by_text("Choice Received").wait_for()
    assert '"batch": 25' in section.inner_text()
    until(lambda: _ti_state(page.url, "pick") == "success", timeout=60)
    detail = api_call(page.url, "GET", "dags/ui_hitl/dagRuns/asks/taskInstances/pick/-1/hitlDetails")
    assert (detail["chosen_options"], detail["params_input"]) == (["us"], {"batch": 25})

    page.goto("/required_actions?response_received=true")
    until(lambda: p.locator("tr[data-task-id]").count() == 2)
    assert "Approval Received" in p.locator("tr[data-task-id=approve]").inner_text()
    page.check_layout("hitl-answered", then=(1280, 800))

    # The same list of one DAG (its Required Actions tab) and of one run.
    page.goto("/dags/ui_hitl")
    p.get_by_role("navigation", name="DAG tabs").get_by_role("link", name="Required Actions").click()
    p.wait_for_url(re.compile(r"/dags/ui_hitl/required_actions$"))
    until(lambda: p.locator("tr[data-task-id]").count() == 2)
    page.check_layout("hitl-dag-tab", then=(1280, 800))
    page.goto("/dags/ui_hitl/runs/asks/required_actions")
    until(lambda: p.locator("tr[data-task-id]").count() == 2)
    assert "Choice Received" in p.locator("tr[data-task-id=pick]").inner_text()
    page.goto("/dags/ui_hitl/runs/no_such_run/required_actions")
    p.get_by_text("No required actions.").wait_for()
    assert page.errors == [] and page.csp_violations == []
