"""XCom editing on a task instance's page, as Airflow 3's XCom tab, against ``updraft local``: a user adds an
entry (JSON typed in the form), edits its value, and deletes it; each change is what a task pulls (the API's
stored value). A value holding serde's tag keys is refused, the refusal shown in the form. The page with the form
open holds the layout rules at 390x844, 1024x768 and 1400x900 (screenshots: artifacts/xcom-edit-*.png). A VIEWER
gets no Add, Edit or Delete."""

from __future__ import annotations

import pytest

from tests.browser.browser_helpers import Page, api_call, until

ENTRIES = "dags/ui_smoke/dagRuns/xcom_edit/taskInstances/produce/xcomEntries"


@pytest.fixture(scope="module")
def finished_run(local_url: str) -> str:
    api_call(local_url, "PATCH", "dags/ui_smoke", {"is_paused": False})
    api_call(local_url, "POST", "dags/ui_smoke/dagRuns", {"dag_run_id": "xcom_edit", "logical_date": None})
    until(lambda: api_call(local_url, "GET", "dags/ui_smoke/dagRuns/xcom_edit")["state"] in ("success", "failed"),
          timeout=120)
    return "xcom_edit"


def _stored(url: str, key: str) -> object:
    return api_call(url, "GET", f"{ENTRIES}/{key}")["value"]


def test_a_user_adds_edits_and_deletes_an_xcom(signed_in: Page, finished_run: str):
    page, p = signed_in, signed_in.page
    page.goto(f"/dags/ui_smoke/runs/{finished_run}/tasks/produce")
    section = p.get_by_role("region", name="XComs")
    section.locator("tr[data-key=return_value]").wait_for()
    section.get_by_role("button", name="Add XCom").click()
    form = p.get_by_role("form", name="Add XCom")
    form.get_by_label("Key").fill("threshold")
    form.get_by_label("Value (JSON)").fill('{"max": 5, "tags": ["a", "b"]}')
    page.check_layout("xcom-edit-add-form", then=(1280, 800))
    form.get_by_role("button", name="Save").click()
    row = section.locator("tr[data-key=threshold]")
    row.wait_for()
    assert '"max": 5' in row.inner_text() and form.count() == 0
    assert _stored(page.url, "threshold") == {"max": 5, "tags": ["a", "b"]}

    row.get_by_role("button", name="Edit threshold").click()
    form = p.get_by_role("form", name="Edit XCom threshold")
    value = form.get_by_label("Value (JSON)")
    assert '"tags"' in value.input_value() and form.get_by_label("Key").get_attribute("readonly") is not None
    # serde's tag keys are refused (a client's value never reads back as a tuple); the form says why.
    page.expect_refusal(422, "xcomEntries")
    value.fill('{"__classname__": "builtins.tuple", "__version__": 1, "__data__": [1]}')
    form.get_by_role("button", name="Save").click()
    form.get_by_role("alert").wait_for()
    assert "reserved serialization keys" in form.get_by_role("alert").inner_text()
    value.fill("[1, 2]")
    form.get_by_role("button", name="Save").click()
    until(lambda: "[ 1, 2 ]" in section.locator("tr[data-key=threshold]").inner_text())
    assert _stored(page.url, "threshold") == [1, 2]
    page.check_layout("xcom-edit-edited", then=(1280, 800))

    p.once("dialog", lambda d: d.accept())
    section.get_by_role("button", name="Delete threshold").click()
    section.locator("tr[data-key=threshold]").wait_for(state="detached")
    assert "threshold" not in {e["key"] for e in api_call(page.url, "GET", ENTRIES)["xcom_entries"]}


def test_a_viewer_gets_no_add_edit_or_delete(signed_in: Page, finished_run: str):
    page, p = signed_in, signed_in.page
    viewer = {"username": "vera", "role": "VIEWER", "csrf_token": "unused"}
    p.route("**/ui/session", lambda route: route.fulfill(json=viewer) if route.request.method == "GET"
            else route.fallback())
    p.set_viewport_size({"width": 390, "height": 844})  # on a phone the section is far down the page
    page.goto(f"/dags/ui_smoke/runs/{finished_run}/tasks/produce/xcom")  # Airflow's XCom tab: this page's part
    section = p.get_by_role("region", name="XComs")
    section.locator("tr[data-key=return_value]").wait_for()
    assert section.get_by_role("button").count() == 0
    until(lambda: section.evaluate("s => s.getBoundingClientRect().top < innerHeight"))  # scrolled to
