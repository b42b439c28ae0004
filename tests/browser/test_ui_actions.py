"""What Airflow's UI lets a user change that only the CLI could before: variables and pools added, edited and
deleted; a run's and a task instance's note; clear with its options after a dry run that lists what would be
cleared; a try's log filtered by level and text, and downloaded. Against ``updraft local``; each step's result is
checked through the API, and screenshots go to tests/browser/artifacts/."""

from __future__ import annotations

import re
from pathlib import Path

from tests.browser.browser_helpers import Page, api_call, until

SIZES = {"phone": (390, 844), "desktop": (1400, 900)}


def shots(page: Page, name: str) -> None:
    for size, (width, height) in SIZES.items():
        page.page.set_viewport_size({"width": width, "height": height})
        page.shot(f"{name}-{size}")
    page.page.set_viewport_size({"width": 1280, "height": 800})


def test_add_edit_and_delete_a_variable(signed_in: Page):
    page, p = signed_in, signed_in.page
    page.goto("/variables")
    p.get_by_role("button", name="Add variable").click()
    form = p.get_by_role("form", name="Add variable")
    form.get_by_label("Key").fill("bucket")
    form.get_by_label("Value").fill("s3://reports")
    form.get_by_label("Description").fill("where reports go")
    shots(page, "var-01-add")
    form.get_by_role("button", name="Save").click()
    row = p.locator("tr[data-id=bucket]")
    row.wait_for()
    assert "s3://reports" in row.inner_text()
    assert api_call(page.url, "GET", "variables/bucket")["value"] == "s3://reports"

    row.get_by_role("button", name="Edit bucket").click()
    form = p.get_by_role("form", name="Edit variable bucket")
    assert form.get_by_label("Key").get_attribute("readonly") is not None  # a key is never renamed
    form.get_by_label("Value").fill("s3://archive")
    form.get_by_role("button", name="Save").click()
    p.wait_for_function("() => document.querySelector('tr[data-id=bucket]')?.textContent.includes('s3://archive')")
    stored = api_call(page.url, "GET", "variables/bucket")
    assert (stored["value"], stored["description"]) == ("s3://archive", "where reports go")
    shots(page, "var-02-list")

    p.once("dialog", lambda dialog: dialog.accept())
    p.get_by_role("button", name="Delete bucket").click()
    p.locator("tr[data-id=bucket]").wait_for(state="detached")
    assert [v["key"] for v in api_call(page.url, "GET", "variables")["variables"]] == []


def test_add_edit_and_delete_a_pool_and_default_pool_stays(signed_in: Page):
    page, p = signed_in, signed_in.page
    page.goto("/pools")
    p.get_by_role("button", name="Add pool").click()
    form = p.get_by_role("form", name="Add pool")
    form.get_by_label("Name").fill("reports")
    form.get_by_label("Slots", exact=True).fill("3")
    form.get_by_role("button", name="Save").click()
    p.locator("tr[data-id=reports]").wait_for()
    assert api_call(page.url, "GET", "pools/reports")["slots"] == 3

    p.locator("tr[data-id=reports]").get_by_role("button", name="Edit reports").click()
    form = p.get_by_role("form", name="Edit pool reports")
    form.get_by_label("Slots", exact=True).fill("7")
    form.get_by_label("Description").fill("nightly reports")
    form.get_by_role("button", name="Save").click()
    until(lambda: api_call(page.url, "GET", "pools/reports")["slots"] == 7, timeout=10)
    assert api_call(page.url, "GET", "pools/reports")["description"] == "nightly reports"
    shots(page, "pool-01-list")

    p.once("dialog", lambda dialog: dialog.accept())
    p.get_by_role("button", name="Delete reports").click()
    p.locator("tr[data-id=reports]").wait_for(state="detached")
    # The API's refusal is shown beside the button: default_pool cannot be deleted.
    page.expect_refusal(400, "/api/v2/pools/default_pool")
    p.once("dialog", lambda dialog: dialog.accept())
    p.get_by_role("button", name="Delete default_pool").click()
    assert "Default Pool can't be deleted" in p.locator("tr[data-id=default_pool] .error").inner_text()
    # The page's refresh redraws the table; the refusal stays beside its button.
    p.locator("tr[data-id=default_pool] .error").evaluate("node => { node.dataset.seen = 'yes'; }")
    p.locator("tr[data-id=default_pool] .error[data-seen]").wait_for(state="detached", timeout=15_000)
    assert "Default Pool can't be deleted" in p.locator("tr[data-id=default_pool] .error").inner_text()
    assert "reports" not in [pool["name"] for pool in api_call(page.url, "GET", "pools")["pools"]]


def _failed_run(page: Page, run_id: str) -> None:
    api_call(page.url, "PATCH", "dags/ui_fails", {"is_paused": False})
    api_call(page.url, "POST", "dags/ui_fails/dagRuns", {"dag_run_id": run_id, "logical_date": None})
    until(lambda: api_call(page.url, "GET", f"dags/ui_fails/dagRuns/{run_id}")["state"] == "failed", timeout=90)


def _succeeded_smoke_run(page: Page, run_id: str, *, n: int) -> None:
    api_call(page.url, "PATCH", "dags/ui_smoke", {"is_paused": False})
    api_call(page.url, "POST", "dags/ui_smoke/dagRuns", {"dag_run_id": run_id, "logical_date": None, "conf": {"n": n}})
    until(lambda: api_call(page.url, "GET", f"dags/ui_smoke/dagRuns/{run_id}")["state"] == "success", timeout=90)


def test_clear_a_run_lists_what_it_would_clear_first_and_its_note_is_edited(signed_in: Page):
    page, p = signed_in, signed_in.page
    _failed_run(page, "to_clear")
    page.goto("/dags/ui_fails/runs/to_clear")
    details = p.get_by_role("region", name="Run details")
    details.wait_for()

    # Updraft notes why a run failed (Airflow leaves the note empty): either way the note is edited in place.
    details.get_by_role("button", name=re.compile(r"^(Add|Edit) note$")).click()
    details.get_by_label("Note text").fill("Looked at it: **flaky** upstream")
    details.get_by_role("button", name="Save note").click()
    details.locator(".note strong", has_text="flaky").wait_for()  # drawn as Markdown
    assert api_call(page.url, "GET", "dags/ui_fails/dagRuns/to_clear")["note"] == "Looked at it: **flaky** upstream"

    details.get_by_role("button", name="Clear run…").click()
    form = p.get_by_role("form", name="Clear")
    form.get_by_text("1 task instance will be cleared:").wait_for()  # the dry run, before anything changes
    assert "boom" in form.locator("table").inner_text()
    form.get_by_label("Only failed").check()
    form.get_by_text("1 task instance will be cleared:").wait_for()
    shots(page, "clear-01-dry-run")
    ti = api_call(page.url, "GET", "dags/ui_fails/dagRuns/to_clear/taskInstances/boom")
    assert (ti["state"], ti["try_number"]) == ("failed", 1)  # the dry runs changed nothing
    form.get_by_role("button", name="Confirm clear").click()
    form.wait_for(state="detached")
    until(lambda: api_call(page.url, "GET", "dags/ui_fails/dagRuns/to_clear/taskInstances/boom")["try_number"] == 2,
          timeout=90)


def test_clear_a_task_with_downstream_lists_the_relatives_and_its_note_is_kept(signed_in: Page):
    page, p = signed_in, signed_in.page
    _succeeded_smoke_run(page, "relatives", n=1)
    page.goto("/dags/ui_smoke/runs/relatives/tasks/produce")
    p.get_by_role("button", name="Clear…").click()
    form = p.get_by_role("form", name="Clear")
    form.get_by_text("1 task instance will be cleared:").wait_for()
    form.get_by_label("Downstream").check()
    form.get_by_text("4 task instances will be cleared:").wait_for()  # produce, checks.count, checks.total, square[0]
    listed = form.locator("tbody tr td:nth-child(3)").all_inner_texts()
    assert sorted(listed) == ["checks.count", "checks.total", "produce", "square"]
    form.get_by_role("button", name="Cancel").click()
    assert api_call(page.url, "GET", "dags/ui_smoke/dagRuns/relatives/taskInstances/produce")["try_number"] == 1

    p.get_by_role("button", name="Add note").click()
    p.get_by_label("Note text").fill("checked by hand")
    p.get_by_role("button", name="Save note").click()
    p.locator(".note", has_text="checked by hand").wait_for()
    assert api_call(page.url, "GET", "dags/ui_smoke/dagRuns/relatives/taskInstances/produce")["note"] == \
        "checked by hand"


def test_log_level_and_text_filters_and_download(signed_in: Page, tmp_path: Path):
    page, p = signed_in, signed_in.page
    _failed_run(page, "for_the_log")
    page.goto("/dags/ui_fails/runs/for_the_log/tasks/boom")
    log = p.get_by_label("Log", exact=True)
    p.wait_for_function("() => document.querySelector('pre.log')?.textContent.includes('boom from the browser test')")
    everything = log.inner_text()
    assert "about to fail on purpose" in everything

    p.get_by_label("Log level").select_option(label="error and above")
    p.wait_for_function("() => document.querySelector('pre.log')?.textContent.includes('about to fail on purpose') === false")
    errors = log.inner_text()
    assert "ValueError: boom from the browser test" in errors  # the traceback stays with its ERROR line
    assert all(" INFO - " not in line for line in errors.splitlines())
    assert re.fullmatch(r"\d+ of \d+ lines", p.locator(".log-tools .muted").inner_text())

    p.get_by_label("Log level").select_option(label="All levels")
    p.get_by_label("Filter log lines").fill("about to fail")
    p.wait_for_function("() => document.querySelector('pre.log')?.textContent.trim().split('\\n').length === 1")
    assert "about to fail on purpose" in log.inner_text()
    shots(page, "log-01-filtered")

    with p.expect_download() as caught:
        p.get_by_role("button", name="Download").click()
    download = caught.value
    assert download.suggested_filename == "ui_fails__for_the_log__boom__try_1.log"
    target = tmp_path / "log.txt"
    download.save_as(target)
    text = target.read_text()
    assert "about to fail on purpose" in text and "boom from the browser test" in text  # the whole log


def _shortcut_rows(page: Page) -> dict[str, list[tuple[str, str]]]:
    """The "?" dialog's rows, by category heading: [(keys as shown, description)]."""
    page.page.keyboard.press("?")
    dialog = page.page.get_by_role("dialog", name="Keyboard Shortcuts")
    dialog.wait_for()
    found = dialog.evaluate("""d => Object.fromEntries([...d.querySelectorAll("section")].map(s => [
        s.querySelector("h3").textContent,
        [...s.querySelectorAll("dt")].map(dt => [dt.textContent, dt.nextElementSibling.textContent])]))""")
    return {category: [(keys, description) for keys, description in rows] for category, rows in found.items()}


def _close_help(page: Page) -> None:
    page.page.keyboard.press("Escape")
    page.page.get_by_role("dialog", name="Keyboard Shortcuts").wait_for(state="detached")


def test_keyboard_shortcuts_of_a_run_its_grid_a_task_and_its_log_as_airflow_has_them(signed_in: Page):
    """Airflow 3's keys: "?" lists the page's shortcuts under its categories; Shift+C/S/F clear and mark the run
    or the task; Shift+arrows move through the grid's cells (Enter opens one); d, /, w, t, s and f work the log."""
    page, p = signed_in, signed_in.page
    _failed_run(page, "for_keys")
    page.goto("/dags/ui_fails/runs/for_keys")
    p.get_by_role("region", name="Run details").wait_for()
    p.locator("table.grid tbody a").first.wait_for()

    rows = _shortcut_rows(page)
    assert list(rows) == ["Global", "Navigation", "Dag View", "Search", "Run & Task Actions"]
    assert ("?", "Show Keyboard Shortcuts") in rows["Global"]
    assert rows["Dag View"] == [("G", "Toggle graph / grid view")]
    assert rows["Navigation"] == [("Shift + ↓ Shift + ↑ Shift + ← Shift + →", "Navigate Tasks")]
    assert ("Ctrl + K", "Search Dags") in rows["Search"]
    assert rows["Run & Task Actions"] == [("Shift + C", "Clear Dag Run"), ("Shift + S", "Mark Dag Run as success"),
                                          ("Shift + F", "Mark Dag Run as failed")]
    shots(page, "shortcuts-01-run-help")
    _close_help(page)

    p.keyboard.press("Shift+C")  # the Clear dialog, with its dry run, as the button opens it
    form = p.get_by_role("form", name="Clear")
    form.get_by_text("1 task instance will be cleared:").wait_for()
    form.get_by_role("button", name="Cancel").click()

    region = "() => document.activeElement.getAttribute('aria-label')"
    p.keyboard.press("g")  # both are drawn: "g" moves between them
    assert p.evaluate(region) == "Graph"
    p.keyboard.press("g")
    assert p.evaluate(region) == "Grid"

    focused = "() => document.activeElement.querySelector('[aria-label]')?.getAttribute('aria-label')"
    p.keyboard.press("Shift+ArrowDown")  # from nowhere: the newest run's first task
    assert p.evaluate(focused) == "boom in for_keys: failed"
    p.keyboard.press("Shift+ArrowUp")  # its run's header
    assert p.evaluate(focused) == "run for_keys: failed"
    p.keyboard.press("Shift+ArrowDown")
    p.keyboard.press("Shift+ArrowRight")  # the newest run is the last column: it stays
    assert p.evaluate(focused) == "boom in for_keys: failed"

    p.keyboard.press("Shift+S")
    until(lambda: api_call(page.url, "GET", "dags/ui_fails/dagRuns/for_keys")["state"] == "success", timeout=20)
    p.keyboard.press("Enter")  # the focused cell's task instance
    p.wait_for_url(re.compile(r"/dags/ui_fails/runs/for_keys/tasks/boom$"))
    p.wait_for_function("() => document.querySelector('pre.log')?.textContent.includes('boom from the browser test')")

    rows = _shortcut_rows(page)
    assert list(rows) == ["Global", "Search", "Logs", "Run & Task Actions"]
    assert rows["Logs"] == [("/", "Search logs"), ("W", "Toggle Wrap"), ("T", "Toggle timestamps"),
                            ("S", "Toggle source"), ("F", "Toggle fullscreen"), ("Ctrl + ↑", "Scroll to top"),
                            ("Ctrl + ↓", "Scroll to bottom"), ("D", "Download logs")]
    assert rows["Run & Task Actions"] == [("Shift + C", "Clear Task Instance"), ("Shift + S", "Mark Task as success"),
                                          ("Shift + F", "Mark Task as failed")]
    shots(page, "shortcuts-02-task-help")
    _close_help(page)

    log = p.locator("pre.log")
    lines = lambda: log.inner_text().splitlines()  # noqa: E731
    odd = re.compile(r"\[\d{4}-\d\d-\d\d [^\]]+\] \{ui_fails\.py:\d+\} WARNING - the input looks odd")
    assert any(odd.fullmatch(line) for line in lines())
    p.keyboard.press("t")
    until(lambda: any(re.fullmatch(r"\{ui_fails\.py:\d+\} WARNING - the input looks odd", line)
                      for line in lines()), timeout=10)
    assert "end of try 1" in lines() and not any(line.startswith("[20") for line in lines())
    p.keyboard.press("s")
    until(lambda: "WARNING - the input looks odd" in lines(), timeout=10)
    p.keyboard.press("t")  # back on: the timestamp, still without the source
    until(lambda: any(re.fullmatch(r"\[\d{4}-[^\]]+\] WARNING - the input looks odd", line) for line in lines()),
          timeout=10)
    assert log.evaluate("e => getComputedStyle(e).whiteSpace") == "pre-wrap"
    p.keyboard.press("w")
    assert log.evaluate("e => getComputedStyle(e).whiteSpace") == "pre"
    p.keyboard.press("f")  # the log's section over the whole window; Escape brings it back
    section = p.get_by_role("region", name="Logs")
    box = section.bounding_box()
    assert box is not None and box["x"] == 0 and box["y"] == 0 and box["width"] == 1280 and box["height"] == 800
    p.keyboard.press("Escape")
    assert section.evaluate("s => getComputedStyle(s).position") != "fixed"

    p.keyboard.press("/")  # the filter field takes the focus, and then the keys typed
    p.keyboard.type("about to")
    until(lambda: lines() == ["about to fail on purpose"], timeout=10)
    p.keyboard.press("d")  # typed into the field: a letter, no download
    assert p.get_by_label("Filter log lines").input_value() == "about tod"
    p.evaluate("document.activeElement.blur()")
    with p.expect_download() as caught:
        p.keyboard.press("d")
    assert caught.value.suggested_filename == "ui_fails__for_keys__boom__try_1.log"

    p.keyboard.press("Shift+S")
    until(lambda: api_call(page.url, "GET", "dags/ui_fails/dagRuns/for_keys/taskInstances/boom")["state"]
          == "success", timeout=20)
    p.keyboard.press("Shift+C")
    p.get_by_role("form", name="Clear").wait_for()
    assert page.errors == []


def test_keyboard_shortcuts_of_the_code_tab_and_a_page_without_its_own(signed_in: Page):
    page, p = signed_in, signed_in.page
    page.goto("/dags/ui_fails/code")
    view = p.get_by_role("region", name="DAG source")
    view.wait_for()
    rows = _shortcut_rows(page)
    assert rows["Code"] == [("W", "Toggle Wrap"), ("F", "Toggle fullscreen")]
    _close_help(page)
    line = p.locator("#L8")  # the docstring: wider than the window
    assert line.evaluate("e => getComputedStyle(e).whiteSpace") == "pre"
    p.keyboard.press("w")
    assert line.evaluate("e => getComputedStyle(e).whiteSpace") == "pre-wrap"
    p.keyboard.press("f")
    box = p.locator("section.code").bounding_box()
    assert box is not None and (box["width"], box["height"]) == (1280, 800)
    p.keyboard.press("Escape")
    assert p.locator("section.code").evaluate("s => getComputedStyle(s).position") == "static"

    page.goto("/variables")  # the header's shortcuts only
    p.get_by_role("heading", name="Variables").wait_for()
    assert _shortcut_rows(page) == {"Global": [("?", "Show Keyboard Shortcuts")], "Search": [("Ctrl + K", "Search Dags")]}
    assert page.errors == []


def test_airflow_s_task_instance_tab_paths_open_the_part_of_the_task_page(signed_in: Page):
    """Airflow's .../rendered_templates and .../mapped paths: the task page, scrolled to its Rendered templates
    (at a phone's width, where they are under the log), and a mapped task's list of instances."""
    page, p = signed_in, signed_in.page
    _succeeded_smoke_run(page, "for_paths", n=3)
    page.goto("/dags/ui_smoke/runs/for_paths/tasks/square/mapped")
    p.get_by_role("link", name="[2]").wait_for()
    assert p.get_by_role("heading", level=1).inner_text().endswith("— 3 mapped instances")

    p.set_viewport_size({"width": 390, "height": 844})
    page.goto("/dags/ui_smoke/runs/for_paths/tasks/square/mapped/2/rendered_templates")
    part = p.get_by_role("region", name="Rendered templates")
    part.wait_for()
    until(lambda: 0 <= part.evaluate("e => e.getBoundingClientRect().top") < 844, timeout=10)
    assert p.evaluate("window.scrollY") > 0  # scrolled down to it, past the log
    page.shot("task-rendered-templates-tab-390x844")
    assert page.errors == []


def test_a_task_of_a_paused_dag_s_run_says_why_it_is_not_running(signed_in: Page):
    """The task page's "Why is it not running?": Airflow's failed dependencies, in its words."""
    page, p = signed_in, signed_in.page
    api_call(page.url, "PATCH", "dags/ui_fails", {"is_paused": True})
    try:
        api_call(page.url, "POST", "dags/ui_fails/dagRuns", {"dag_run_id": "while_paused", "logical_date": None})
        page.goto("/dags/ui_fails/runs/while_paused/tasks/boom")
        why = p.get_by_role("region", name="Why it is not running")
        why.get_by_text("Dag Not Paused").wait_for()
        assert why.inner_text().splitlines() == [
            "Why is it not running?",
            "Dag Not Paused: Task's DAG 'ui_fails' is paused.",
            "Dagrun Running: Task instance's dagrun was not in the 'running' state but in the state 'queued'."]
        page.shot("task-why-not-running")
        assert page.errors == []
    finally:
        api_call(page.url, "PATCH", "dags/ui_fails", {"is_paused": False})
