"""The header's timezone switch, as Airflow 3's, against ``updraft local`` in a browser set to Europe/Paris: times
show on the browser's clock until the user picks UTC or another zone; the choice is kept across reloads (this
browser's storage) and every time the UI draws follows it; the trigger form's logical date is typed on the chosen
zone's clock. The open menu holds the layout rules at 390x844, 1024x768 and 1400x900 (artifacts/timezone-*.png)."""

from __future__ import annotations

import datetime as dt
import re
from zoneinfo import ZoneInfo

import pytest

from tests.browser.browser_helpers import VIEWPORTS, Page, api_call, until
from tests.browser.layout_rules import layout_problems


@pytest.fixture(scope="module")
def finished_run(local_url: str) -> dict:
    api_call(local_url, "PATCH", "dags/ui_smoke", {"is_paused": False})
    api_call(local_url, "POST", "dags/ui_smoke/dagRuns", {"dag_run_id": "tz_1", "logical_date": "2024-05-01T22:30:00Z"})
    return until(lambda: (run := api_call(local_url, "GET", "dags/ui_smoke/dagRuns/tz_1"))["state"] in (
        "success", "failed") and run, timeout=120)


def shown(iso: str, zone: str) -> str:
    """How Chromium's en-US format writes ``iso`` in ``zone`` (the UI's date format)."""
    when = dt.datetime.fromisoformat(iso.replace("Z", "+00:00")).astimezone(ZoneInfo(zone))
    return when.strftime("%m/%d/%Y, %I:%M:%S %p")


def _choose(p, zone: str) -> None:
    p.locator("#timezone").click()
    p.get_by_label("Timezone", exact=True).select_option(zone)


def test_times_follow_the_chosen_timezone_and_the_choice_is_kept(signed_in: Page, finished_run: dict):
    page, p = signed_in, signed_in.page
    after = finished_run["run_after"]
    page.goto("/dags/ui_smoke/runs")
    cell = p.locator("tr[data-run-id=tz_1] td").nth(3).locator("time")  # Run after
    cell.wait_for()
    assert p.locator("#timezone").inner_text() == "Local time"
    assert cell.inner_text() == shown(after, "Europe/Paris")  # the browser's own zone, as before a choice

    _choose(p, "UTC")
    until(lambda: p.locator("tr[data-run-id=tz_1] td").nth(3).inner_text() == shown(after, "UTC"))
    assert p.locator("#timezone").inner_text() == "UTC"
    _choose(p, "Asia/Tokyo")
    until(lambda: p.locator("tr[data-run-id=tz_1] td").nth(3).inner_text() == shown(after, "Asia/Tokyo"))
    assert p.locator("tr[data-run-id=tz_1] td").nth(4).inner_text() == shown(finished_run["start_date"], "Asia/Tokyo")

    # Kept in this browser: another page, after a reload, is in Tokyo time too (the run's page, its facts).
    page.goto("/dags/ui_smoke/runs/tz_1")
    p.get_by_role("definition").filter(has_text=re.compile(r"\d\d/\d\d/\d{4}")).first.wait_for()
    assert p.locator("#timezone").inner_text() == "Asia/Tokyo"
    started = p.locator(f'time[datetime="{finished_run["start_date"]}"]').first
    assert started.inner_text() == shown(finished_run["start_date"], "Asia/Tokyo")
    assert started.get_attribute("title").endswith(" UTC")  # UTC on hover, whatever the zone

    # The open menu is a popover over the page (screenshot); closed, the header naming the zone breaks no rule.
    broken = {}
    for width, height in VIEWPORTS:
        p.set_viewport_size({"width": width, "height": height})
        p.locator("#timezone").click()
        assert re.match(r"Current time in Asia/Tokyo: \d\d/\d\d/\d{4}", p.locator("#timezone-now").inner_text())
        menu = p.locator(".timezone-menu .menu-list").bounding_box()
        assert menu["x"] >= 0 and menu["x"] + menu["width"] <= width, f"the menu leaves the viewport at {width}"
        page.shot(f"timezone-menu-{width}x{height}")
        p.keyboard.press("Escape")
        page.shot(f"timezone-closed-{width}x{height}")
        if problems := layout_problems(p):
            broken[f"{width}x{height}"] = problems[:8]
    assert broken == {}
    p.set_viewport_size({"width": 1280, "height": 800})

    # The trigger form's logical date is on Tokyo's clock: 09:00 there is 00:00 UTC.
    page.goto("/dags/ui_smoke")
    p.get_by_role("button", name="Trigger").click()
    form = p.get_by_role("form", name="Trigger")
    form.get_by_label("Logical date (Asia/Tokyo)").fill("2024-06-01T09:00:00")
    form.get_by_label("Run id").fill("tz_tokyo")
    form.get_by_role("button", name="Trigger").click()
    p.wait_for_url(re.compile(r"/dags/ui_smoke/runs/tz_tokyo$"))
    assert api_call(page.url, "GET", "dags/ui_smoke/dagRuns/tz_tokyo")["logical_date"] == "2024-06-01T00:00:00Z"

    _choose(p, "local")
    until(lambda: p.locator("#timezone").inner_text() == "Local time")
    page.goto("/dags/ui_smoke/runs")
    cell.wait_for()
    assert cell.inner_text() == shown(after, "Europe/Paris")


def test_a_typed_date_is_the_instant_the_chosen_zone_s_clock_names_across_daylight_saving(signed_in: Page):
    """timezone.js's fromWallTime and wallTime in New York, on either side of its changes of offset."""
    page, p = signed_in, signed_in.page
    page.goto("/dags")
    p.locator("#timezone").wait_for()
    results = p.evaluate("""async () => {
      localStorage.setItem("updraft.timezone", "America/New_York");
      const src = document.querySelector("script[type=module]").src;
      const tz = await import(src.replace(/app\\.js$/, "timezone.js"));
      const typed = ["2024-01-15T09:00:00", "2024-03-10T03:30:00", "2024-07-01T09:00:00", "2024-11-03T12:00:00"];
      return typed.map((t) => [tz.fromWallTime(t).toISOString(), tz.wallTime(tz.fromWallTime(t))]);
    }""")
    assert results == [
        ["2024-01-15T14:00:00.000Z", "2024-01-15T09:00:00"],  # EST, UTC-5
        ["2024-03-10T07:30:00.000Z", "2024-03-10T03:30:00"],  # the first hour of EDT
        ["2024-07-01T13:00:00.000Z", "2024-07-01T09:00:00"],  # EDT, UTC-4
        ["2024-11-03T17:00:00.000Z", "2024-11-03T12:00:00"],  # EST again, the same day
    ]
