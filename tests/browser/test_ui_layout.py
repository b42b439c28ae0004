"""The UI's layout at a phone's, a small laptop's and a desktop's viewport (390x844, 1024x768, 1400x900), checked
against the rules of :mod:`tests.browser.layout_rules` on every core page (DAG list, grid, run page, task page,
graph of a 16-task DAG, the 404 page), with a screenshot of each in tests/browser/artifacts/layout-*.png; and
the shell's habits: local all-admins mode goes straight in, a loading state while data is on its way, dark mode,
an in-app 404 page, Airflow UI paths Updraft lacks answer a page."""

from __future__ import annotations

import re
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.browser_helpers import (
    BROKEN_DAG,
    FAILING_DAG,
    SMOKE_DAG,
    VIEWPORTS,
    Browser,
    SizedPage,
    api_call,
    local_system,
    until,
)
from tests.browser.layout_rules import graph_problems, layout_problems

LONG_TASK = "load_the_customer_orders_into_the_warehouse_tables"
RUN_ID = "manual__2026-12-02T06:59:12.345678+00:00"

# 16 tasks in six layers with fan-outs and fan-ins (edges a naive layering draws across nodes), one long id.
WIDE_DAG = f'''
from datetime import datetime
from airflow.sdk import DAG
from airflow.providers.standard.operators.empty import EmptyOperator

with DAG("ui_wide", schedule=None, start_date=datetime(2024, 1, 1), tags=["ui"]):
    t = {{f"t{{i:02d}}": EmptyOperator(task_id=f"t{{i:02d}}") for i in range(15)}}
    long = EmptyOperator(task_id="{LONG_TASK}")
    t["t00"] >> [t["t01"], t["t02"], t["t03"]]
    t["t01"] >> [t["t04"], t["t06"]]
    t["t02"] >> [t["t05"], t["t04"]]
    t["t03"] >> [t["t06"], long]
    [t["t04"], t["t05"]] >> t["t07"]
    [t["t06"], long] >> t["t08"]
    t["t00"] >> t["t09"]
    [t["t07"], t["t08"], t["t09"]] >> t["t10"]
    t["t10"] >> [t["t11"], t["t12"], t["t13"]]
    [t["t11"], t["t12"], t["t13"], t["t05"]] >> t["t14"]
'''


@pytest.fixture(scope="module")
def local_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``updraft local`` with the browser tier's DAGs and the 16-task one; a finished run of ``ui_smoke`` with a
    long run id (four mapped instances) and of ``ui_wide``."""
    with local_system(tmp_path_factory.mktemp("ui-layout"), {"ui_smoke.py": SMOKE_DAG, "ui_fails.py": FAILING_DAG,
                                                             "ui_broken.py": BROKEN_DAG, "ui_wide.py": WIDE_DAG},
                      parsed=3) as url:
        for dag_id, conf in (("ui_smoke", {"n": 4}), ("ui_wide", {})):
            api_call(url, "PATCH", f"dags/{dag_id}", {"is_paused": False})
            api_call(url, "POST", f"dags/{dag_id}/dagRuns",
                     {"dag_run_id": RUN_ID, "logical_date": None, "conf": conf})
        for dag_id in ("ui_smoke", "ui_wide"):
            until(lambda dag_id=dag_id: api_call(url, "GET", f"dags/{dag_id}/dagRuns/{RUN_ID}")["state"]
                  == "success", timeout=120)
        for dag_id in ("ui_smoke", "ui_wide"):  # paused again: no run starts while the pages are looked at
            api_call(url, "PATCH", f"dags/{dag_id}", {"is_paused": True})
        yield url


PAGES = {  # name: (path, what shows once drawn)
    "dag-list": ("/dags", "table.dags tbody tr"),
    "grid": ("/dags/ui_smoke", "table.grid"),
    "run": (f"/dags/ui_smoke/runs/{RUN_ID}", "table.tis tbody tr"),
    "task": (f"/dags/ui_smoke/runs/{RUN_ID}/tasks/produce", "pre.log"),
    "graph-16": (f"/dags/ui_wide/runs/{RUN_ID}", "svg.graph g.node"),
    "not-found": ("/no/such/page", "h1"),
}


@pytest.mark.parametrize(("width", "height"), VIEWPORTS, ids=[f"{w}x{h}" for w, h in VIEWPORTS])
def test_every_core_page_holds_the_layout_rules(sized_page: SizedPage, width: int, height: int):
    page = sized_page(width, height, sign_in=True)
    p = page.page
    page.expect_refusal(404, "/no/such/page")
    broken: dict[str, list[str]] = {}
    for name, (path, ready) in PAGES.items():
        page.goto(path)
        p.locator(ready).first.wait_for()
        p.wait_for_load_state("networkidle")
        page.shot(f"layout-{name}-{width}x{height}")
        if problems := layout_problems(p):
            broken[name] = problems[:8]
    assert broken == {}
    assert page.errors == []


def test_the_run_page_shows_every_column_of_its_task_table_and_the_whole_run_id(sized_page: SizedPage):
    """At 1400x900 the run panel of the 16-task DAG (whose graph is wide) is wide enough for its table (no column
    needs scrolling), rows are one line tall, the run id is on one line."""
    page = sized_page(1400, 900, sign_in=True)
    p = page.page
    page.goto(f"/dags/ui_wide/runs/{RUN_ID}")
    p.locator("table.tis tbody tr").first.wait_for()
    table = p.locator("table.tis")
    # The table scrolls inside itself when too wide (display: block; overflow-x: auto), or its box would.
    hidden = table.evaluate("t => Math.max(t.scrollWidth - t.clientWidth, t.parentElement.scrollWidth"
                            " - t.parentElement.clientWidth)")
    assert hidden <= 1, f"{hidden} px of the task table are scrolled out of view"
    assert table.evaluate("t => t.getBoundingClientRect().right") <= 1400
    heights = table.locator("tbody tr").evaluate_all("rs => rs.map(r => r.getBoundingClientRect().height)")
    assert max(heights) < 40, heights
    run_id = p.get_by_role("region", name="Run details").locator("h2 code")
    assert run_id.evaluate("c => c.getClientRects().length") == 1  # not broken over lines
    assert run_id.inner_text() == RUN_ID


def test_the_16_task_graph_lays_out_without_crossing_nodes_cutting_ids_or_sprawling(sized_page: SizedPage):
    page = sized_page(1400, 900, sign_in=True)
    p = page.page
    page.goto(f"/dags/ui_wide/runs/{RUN_ID}")
    p.locator("svg.graph g.node").first.wait_for()
    assert graph_problems(p) == []
    assert p.locator(f'svg.graph g.node[data-task-id="{LONG_TASK}"] text.label').text_content() == LONG_TASK
    box = p.locator("svg.graph").bounding_box()
    assert box is not None and box["width"] <= 1400 - 32  # inside the page, no sideways scroll
    # Zoom and pan: the wheel zooms the drawing (not the page), a drag moves it, "Fit" brings it back.
    view = lambda: p.locator("svg.graph").get_attribute("viewBox")  # noqa: E731

    def view_after(old: str) -> str:
        """The viewBox once it differs from ``old``: a wheel or drag reaches the page's handlers after Playwright
        returns (it does not wait for them), so the new view is waited for, not read at once."""
        p.wait_for_function("old => document.querySelector('svg.graph').getAttribute('viewBox') !== old", arg=old)
        return view()

    fitted = view()
    p.locator("svg.graph").hover()
    p.mouse.wheel(0, -400)
    zoomed = view_after(fitted)
    assert float(zoomed.split()[2]) < float(fitted.split()[2])
    # A drag from a corner (the drawing's background) moves it. Under load the page can still move under the
    # pointer between Playwright's hover and its press (a panel above the drawing finishing its draw), so the
    # press's target is recorded: a press that missed the drawing is made again; one that hit it must pan.
    p.evaluate("() => document.addEventListener('pointerdown', e => { window.pressedOn = e.target.closest"
               "('svg.graph') ? 'graph' : e.target.tagName; }, true)")
    for _ in range(5):
        p.locator("svg.graph").hover(position={"x": 6, "y": 6})
        box = p.locator("svg.graph").bounding_box()
        assert box is not None
        p.evaluate("() => { window.pressedOn = null; }")
        p.mouse.down()
        p.mouse.move(box["x"] + 86, box["y"] + 36, steps=4)
        p.mouse.up()
        p.wait_for_function("() => window.pressedOn !== null")
        if p.evaluate("window.pressedOn") == "graph":
            break
    assert p.evaluate("window.pressedOn") == "graph", "every press missed the drawing"
    assert view_after(zoomed).split()[:2] != zoomed.split()[:2]
    p.get_by_role("button", name="Fit").click()
    p.wait_for_function("want => document.querySelector('svg.graph').getAttribute('viewBox') === want", arg=fitted)


def test_local_all_admins_mode_goes_straight_in_without_a_sign_in_page(sized_page: SizedPage):
    page = sized_page(1024, 768)
    p = page.page
    page.goto("/dags")
    p.locator("table.dags tbody tr").first.wait_for()
    assert "/auth/login" not in p.url
    loaded = p.evaluate("performance.getEntriesByType('resource').map(e => e.name)")
    assert not [name for name in loaded if "dagre" in name]  # the graph's library waits for a graph
    assert p.locator("#who").inner_text().startswith("admin (ADMIN)")
    page.goto("/auth/login?next=%2Fdags%2Fui_smoke")  # an old bookmark of the login page: straight on
    p.wait_for_url(re.compile(r"/dags/ui_smoke$"))
    assert page.errors == []


def test_a_loading_state_shows_while_the_grid_is_on_its_way(sized_page: SizedPage):
    page = sized_page(1024, 768, sign_in=True)
    p = page.page
    held: list[Any] = []
    released: list[bool] = []

    def hold(route: Any) -> None:  # answered once the loading state has been seen
        if released:
            route.continue_()
        else:
            held.append(route)

    p.route(re.compile(r"/ui/api/v2/dags/ui_smoke/(grid|dagRuns)\b"), hold)
    page.goto("/dags/ui_smoke")
    p.get_by_role("status").filter(has_text="Loading").first.wait_for()
    assert p.locator("table.grid").count() == 0
    for _ in range(100):  # the sync API runs the route handler only inside its own calls
        if held:
            break
        p.wait_for_timeout(100)
    assert held, "the grid's request never came"
    released.append(True)
    for route in held:
        route.continue_()
    p.locator("table.grid").wait_for()
    assert p.get_by_role("status").filter(has_text="Loading").count() == 0


def _background(p: Any) -> str:
    return str(p.evaluate("getComputedStyle(document.body).backgroundColor"))


def _is_dark(colour: str) -> bool:
    r, g, b = (int(n) for n in re.findall(r"\d+", colour)[:3])
    return (r + g + b) / 3 < 80


def test_dark_mode_follows_the_system_and_the_toggle_changes_the_colours(sized_page: SizedPage):
    page = sized_page(1024, 768, color_scheme="dark", sign_in=True)
    p = page.page
    page.goto("/dags/ui_smoke")
    p.locator("table.grid").wait_for()
    assert _is_dark(_background(p))
    panel = p.locator("table.grid").evaluate("t => getComputedStyle(t).backgroundColor")
    assert _is_dark(panel)
    page.shot("layout-dark-grid-1024x768")
    p.get_by_role("button", name=re.compile("Theme")).click()  # dark -> light
    assert not _is_dark(_background(p))
    p.reload()
    p.locator("table.grid").wait_for()
    assert not _is_dark(_background(p))  # the choice is kept


def test_an_unknown_ui_path_is_an_in_app_404_page_and_airflow_paths_answer_a_page(sized_page: SizedPage, browser: Browser):
    page = sized_page(1024, 768, sign_in=True)
    p = page.page
    page.expect_refusal(404, "/dags/ui_smoke/no_such_tab/x")
    page.goto("/dags/ui_smoke/no_such_tab/x")
    p.get_by_role("heading", name="Page not found").wait_for()
    assert "/dags/ui_smoke/no_such_tab/x" in p.locator("main").inner_text()
    p.get_by_role("link", name="Back to the DAGs").click()
    p.wait_for_url(re.compile(r"/dags$"))
    # As a browser asks for it (Accept: text/html): the app shell, status 404; an API client still gets JSON.
    for path in ("/deadlines", "/dags/ui_smoke/no_such_tab/x"):
        request = urllib.request.Request(browser.url + path, headers={"Accept": "text/html,*/*"})
        with pytest.raises(urllib.error.HTTPError) as answer:
            urllib.request.urlopen(request, timeout=30)
        assert answer.value.code == 404
        assert answer.value.headers["Content-Type"].startswith("text/html")
        assert '<main id="main">' in answer.value.read().decode()
    with pytest.raises(urllib.error.HTTPError) as answer:
        urllib.request.urlopen(browser.url + "/api/v2/no_such_route", timeout=30)
    assert answer.value.read().decode().startswith('{"error": "API route not found"')
