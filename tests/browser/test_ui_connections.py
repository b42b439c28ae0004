"""The connection form in the browser, against ``updraft local`` with the real provider wheels' infos
(``providers.json``): the type picker lists the installed providers' types, each type draws Airflow's form for it
(its labels, placeholders and hidden fields, the provider's own fields), and a connection added and edited there
is what the API then holds. Screenshots at phone, laptop and desktop widths in tests/browser/artifacts/."""

from __future__ import annotations

import json

from tests.browser.browser_helpers import Page, api_call

WIDTHS = {"phone": (390, 844), "laptop": (1366, 768), "desktop": (1920, 1080)}


def test_add_an_aws_connection_then_edit_it_with_the_providers_form(signed_in: Page):
    page, p = signed_in, signed_in.page
    page.goto("/connections")
    p.get_by_role("button", name="Add connection").click()
    form = p.get_by_role("form", name="Add connection")
    form.wait_for()
    picker = form.get_by_label("Connection Type")
    options = picker.locator("option").evaluate_all("os => os.map(o => o.value)")
    assert {"aws", "http", "postgres", "snowflake", "slackwebhook", "fs", "generic"} <= set(options)

    picker.select_option("aws")  # Amazon's form: no host, schema or port; its own labels and placeholders
    assert form.get_by_label("Host").count() == 0 and form.get_by_label("Port").count() == 0
    assert form.get_by_label("Schema").count() == 0
    key = form.get_by_label("AWS Access Key ID")
    assert key.get_attribute("placeholder") == "YOUR_AWS_ACCESS_KEY_ID"
    assert form.get_by_label("AWS Secret Access Key").get_attribute("type") == "password"
    for name, (width, height) in WIDTHS.items():
        p.set_viewport_size({"width": width, "height": height})
        page.shot(f"conn-01-add-aws-{name}")
    p.set_viewport_size({"width": 1280, "height": 800})

    form.get_by_label("Connection ID").fill("aws_reports")
    form.get_by_label("Description").fill("the reports bucket's account")
    form.get_by_label("Extra Fields JSON").fill('{"region_name": "eu-west-1"}')
    form.get_by_role("button", name="Save").click()
    p.locator("tr[data-conn-id=aws_reports]").wait_for()
    stored = api_call(page.url, "GET", "connections/aws_reports")
    assert (stored["conn_type"], stored["login"], stored["host"], stored["description"]) == (
        "aws", None, None, "the reports bucket's account")
    assert json.loads(stored["extra"]) == {"region_name": "eu-west-1"}  # no keys: the DAG-code role's credentials

    # Edit: switch to SMTP; its provider fields come with their defaults, its enum is a picker.
    p.get_by_role("button", name="Edit aws_reports").click()
    form = p.get_by_role("form", name="Edit connection aws_reports")
    assert form.get_by_label("Connection ID").get_attribute("readonly") is not None
    form.get_by_label("Connection Type").select_option("smtp")
    assert form.get_by_label("Schema").count() == 0  # SMTP hides it
    assert form.get_by_label("Number of Retries").input_value() == "5"
    assert form.get_by_label("Auth Type").locator("option:checked").inner_text() == "basic"
    assert json.loads(form.get_by_label("Extra Fields JSON").input_value()) == {"region_name": "eu-west-1"}
    form.get_by_label("Host").fill("smtp.example.com")
    form.get_by_label("Port").fill("587")
    form.get_by_label("Password").fill("s3cret-pass")
    form.get_by_label("From email").fill("airflow@example.com")
    form.get_by_label("Disable SSL").check()
    for name, (width, height) in WIDTHS.items():
        p.set_viewport_size({"width": width, "height": height})
        page.shot(f"conn-02-edit-smtp-{name}")
    p.set_viewport_size({"width": 1280, "height": 800})
    form.get_by_role("button", name="Save").click()
    p.locator("tr[data-conn-id=aws_reports] td", has_text="smtp.example.com").wait_for()
    stored = api_call(page.url, "GET", "connections/aws_reports")
    assert (stored["conn_type"], stored["host"], stored["port"], stored["password"]) == (
        "smtp", "smtp.example.com", 587, "***")
    assert json.loads(stored["extra"]) == {"region_name": "eu-west-1", "from_email": "airflow@example.com",
                                           "timeout": 30, "retry_limit": 5, "disable_tls": False,
                                           "disable_ssl": True, "auth_type": "basic"}

    # Edit again leaving the password empty: the stored one is kept (the API shows it masked either way).
    p.get_by_role("button", name="Edit aws_reports").click()
    form = p.get_by_role("form", name="Edit connection aws_reports")
    assert form.get_by_label("Password").input_value() == ""
    form.get_by_label("Description").fill("now a mail server")
    form.get_by_role("button", name="Save").click()
    p.locator("tr[data-conn-id=aws_reports] td", has_text="now a mail server").wait_for()
    for name, (width, height) in WIDTHS.items():
        p.set_viewport_size({"width": width, "height": height})
        page.shot(f"conn-03-list-{name}")
    p.set_viewport_size({"width": 1280, "height": 800})

    p.once("dialog", lambda dialog: dialog.accept())
    p.get_by_role("button", name="Delete aws_reports").click()
    p.get_by_text("No connections.").wait_for()


def test_the_api_refusal_shows_in_the_form(signed_in: Page):
    page, p = signed_in, signed_in.page
    api_call(page.url, "POST", "connections", {"connection_id": "taken", "conn_type": "http"})
    page.goto("/connections")
    p.get_by_role("button", name="Add connection").click()
    form = p.get_by_role("form", name="Add connection")
    form.get_by_label("Connection ID").fill("taken")
    form.get_by_label("Connection Type").select_option("http")
    assert form.get_by_label("Use DNS SRV Lookup").get_attribute("type") == "checkbox"
    page.expect_refusal(409, "/connections")
    form.get_by_role("button", name="Save").click()
    form.get_by_role("alert").wait_for()
    assert "already exists" in form.get_by_role("alert").inner_text()
    api_call(page.url, "DELETE", "connections/taken")
