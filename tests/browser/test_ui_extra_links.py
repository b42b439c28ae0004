"""Operator extra links in the API and the browser, with a real provider: `updraft local --requirements` (a
subprocess, so provider code never runs in the test's process) runs the databricks provider's
``DatabricksSubmitRunOperator`` against a small local fake of the Databricks Jobs API, and a user-defined operator
with links of its own. The API's ``links`` route answers the provider's "See Databricks Job Run" link with the run
page the operator persisted, and the task instance view shows the links as Airflow's UI does: a button each for the
links with a URL, none for an empty one or one that is no web page (``javascript:``). Screenshots at phone, laptop
and desktop widths in tests/browser/artifacts/."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import local_process
from tests.browser.browser_helpers import Page, api_call, until
from tests.provider_packages import REQUIREMENTS, installed_providers

WIDTHS = {"phone": (390, 844), "laptop": (1366, 768), "desktop": (1920, 1080)}
RUN_PAGE = "https://dbc.example.com/?o=1#job/7/run/4242"

DAG_FILE = '''
import datetime
from airflow.sdk import DAG, BaseOperator, BaseOperatorLink
from airflow.providers.databricks.operators.databricks import DatabricksSubmitRunOperator


class ConsoleLink(BaseOperatorLink):
    name = "Console"

    def get_link(self, operator, *, ti_key):
        return f"https://console.example.com/jobs/{ti_key.task_id}?try={ti_key.try_number}"


class ScriptLink(BaseOperatorLink):
    name = "Not a page"

    def get_link(self, operator, *, ti_key):
        return "javascript:alert(document.domain)"


class PendingLink(BaseOperatorLink):
    name = "Pending"

    def get_link(self, operator, *, ti_key):
        return ""


class Publish(BaseOperator):
    operator_extra_links = (ConsoleLink(), ScriptLink(), PendingLink())

    def execute(self, context):
        print("published")


with DAG("links_ui", schedule=None, start_date=datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)):
    DatabricksSubmitRunOperator(task_id="submit", polling_period_seconds=0, json={"run_name": "nightly", "tasks": [
        {"task_key": "t", "notebook_task": {"notebook_path": "/nightly"}, "existing_cluster_id": "c-1"}]},
    ) >> Publish(task_id="publish")
'''


class FakeJobsApi(http.server.BaseHTTPRequestHandler):
    """Databricks' Jobs API 2.2 as the operator uses it: submit answers a run id, get a finished run."""

    calls: list[tuple[str, str, Any, str | None]] = []

    def _answer(self, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        self.calls.append(("POST", self.path, body, self.headers.get("Authorization")))
        self._answer({"run_id": 4242})

    def do_GET(self) -> None:
        self.calls.append(("GET", self.path, None, self.headers.get("Authorization")))
        self._answer({"run_id": 4242, "run_page_url": RUN_PAGE, "state": {
            "life_cycle_state": "TERMINATED", "result_state": "SUCCESS", "state_message": ""}})

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def jobs_api() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeJobsApi)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture(scope="module")
def local_url(tmp_path_factory: pytest.TempPathFactory, jobs_api: int) -> Iterator[str]:
    """This module's own local system (conftest's runs in-process, without providers): `updraft local` with the
    test providers' requirements, the databricks connection pointing at the fake."""
    installed_providers()  # installed by `make install`, or a failure saying so (never the network here)
    root = tmp_path_factory.mktemp("links-ui")
    dags = root / "dags"
    dags.mkdir()
    (dags / "links_ui.py").write_text(textwrap.dedent(DAG_FILE))
    connection = {"conn_type": "databricks", "host": "127.0.0.1", "port": jobs_api, "schema": "http",
                  "password": "dapi-test-token"}
    env = {**os.environ, "UPDRAFT_HOME": str(root / "home"), "PIP_NO_INDEX": "1",
           "AIRFLOW_CONN_DATABRICKS_DEFAULT": json.dumps(connection)}
    env.pop("AWS_ENDPOINT_URL", None)
    system = local_process.start(["local", "--dags-folder", str(dags), "--requirements", str(REQUIREMENTS),
                                  "--unpause", "--tick-seconds", "1", "--workers", "2"], cwd=root, env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        endpoint = root / "home" / "local.json"
        until(lambda: endpoint.is_file() or system.poll() is not None, timeout=120)
        assert system.poll() is None, system.communicate()[0]
        url = json.loads(endpoint.read_text())["api_url"]
        try:
            until(lambda: api_call(url, "GET", "dags")["total_entries"] == 1, timeout=120)
        except AssertionError:
            raise AssertionError(f"the DAG was not parsed: {api_call(url, 'GET', 'importErrors')}") from None
        yield url
    finally:
        local_process.stop(system)


def _links(url: str, task_id: str) -> dict[str, Any]:
    return api_call(url, "GET", f"dags/links_ui/dagRuns/r1/taskInstances/{task_id}/links")


def _buttons(page: Page) -> dict[str, dict[str, str | None]]:
    section = page.page.get_by_role("region", name="Extra links")
    section.get_by_role("link").first.wait_for(timeout=30_000)
    return {a.inner_text(): {"href": a.get_attribute("href"), "target": a.get_attribute("target"),
                             "rel": a.get_attribute("rel")} for a in section.get_by_role("link").all()}


def test_the_providers_run_page_link_in_the_api_and_as_a_button(signed_in: Page):
    page, p = signed_in, signed_in.page
    api_call(page.url, "POST", "dags/links_ui/dagRuns", {"dag_run_id": "r1", "logical_date": None})
    until(lambda: api_call(page.url, "GET", "dags/links_ui/dagRuns/r1")["state"] in ("success", "failed"),
          timeout=120)
    states = {ti["task_id"]: ti["state"] for ti in
              api_call(page.url, "GET", "dags/links_ui/dagRuns/r1/taskInstances")["task_instances"]}
    assert states == {"submit": "success", "publish": "success"}
    assert ("POST", "/api/2.2/jobs/runs/submit") in [(c[0], c[1]) for c in FakeJobsApi.calls]
    assert {c[3] for c in FakeJobsApi.calls} == {"Bearer dapi-test-token"}

    # The API: the provider's link (a BaseOperatorLink reading the run page URL the operator pushed) answered with
    # the URL the try stored; the user's operator's three, one of them empty.
    assert _links(page.url, "submit") == {"extra_links": {"See Databricks Job Run": RUN_PAGE}, "total_entries": 1}
    assert _links(page.url, "publish") == {"extra_links": {
        "Console": "https://console.example.com/jobs/publish?try=1", "Not a page": "javascript:alert(document.domain)",
        "Pending": None}, "total_entries": 3}
    assert api_call(page.url, "GET", "dags/links_ui/tasks/submit")["extra_links"] == ["See Databricks Job Run"]

    # The UI: a button in the task instance's header, opened in a new tab.
    page.goto("/dags/links_ui/runs/r1/tasks/submit")
    assert _buttons(page) == {"See Databricks Job Run": {"href": RUN_PAGE, "target": "_blank",
                                                         "rel": "noopener noreferrer"}}
    for name, (width, height) in WIDTHS.items():
        p.set_viewport_size({"width": width, "height": height})
        page.shot(f"links-01-databricks-{name}")
    p.set_viewport_size({"width": 1280, "height": 800})

    # Only the link that is a web page is a button: no javascript: URL, no empty one.
    page.goto("/dags/links_ui/runs/r1/tasks/publish")
    assert _buttons(page) == {"Console": {"href": "https://console.example.com/jobs/publish?try=1",
                                          "target": "_blank", "rel": "noopener noreferrer"}}
    assert p.get_by_role("region", name="Extra links").get_by_role("link").count() == 1
    for name, (width, height) in WIDTHS.items():
        p.set_viewport_size({"width": width, "height": height})
        page.shot(f"links-02-user-operator-{name}")


def test_a_task_without_links_shows_no_extra_links(signed_in: Page):
    """Before any try the links route has nothing to show: no section (as Airflow's UI, which draws none)."""
    page, p = signed_in, signed_in.page
    api_call(page.url, "PATCH", "dags/links_ui", {"is_paused": True})  # r2 stays queued: no try starts
    api_call(page.url, "POST", "dags/links_ui/dagRuns", {"dag_run_id": "r2", "logical_date": None})
    page.goto("/dags/links_ui/runs/r2/tasks/publish")
    p.get_by_label("Log", exact=True).wait_for()
    p.wait_for_function("() => document.querySelector('pre.log')?.textContent.includes('No try has started yet')")
    assert p.get_by_role("region", name="Extra links").count() == 0
    assert Path(page.shot("links-03-no-try-yet")).is_file()
