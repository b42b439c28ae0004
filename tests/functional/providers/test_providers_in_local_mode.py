"""Issue 31's "Done when": a DAG written for Airflow 3 with the amazon, http and common-sql providers
(dags/orders_pipeline.py), given only a requirements.txt beside its DAGs folder (the test providers' file) and its
connections as AIRFLOW_CONN_* URIs, runs unchanged in `updraft local` and ends with Airflow's states.

`updraft local` runs as a process of its own (its DAG packages must not become importable in this test process),
started as a user starts it; the run is triggered and read through its REST API. The HTTP service is a server of
this test, the database a SQLite file, S3 the embedded AWS.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import boto3
import pytest

from tests import local_process
from tests.provider_packages import REQUIREMENTS, installed_providers
from updraft.resources import LOCAL_CREDENTIALS

pytestmark = pytest.mark.slow

HERE = Path(__file__).parent
ORDERS = [{"id": 1, "amount": 12.5}, {"id": 2, "amount": 30.0}, {"id": 3, "amount": 7.25}]
WAIT_S = 240.0  # a loaded 2-core machine: the start, the parse and eight tries, each in a fresh worker child


class OrdersApi(BaseHTTPRequestHandler):
    """GET /orders?day=... answers the day's orders; POST /totals records its body."""

    seen: list[tuple[str, str, str]] = []

    def do_GET(self) -> None:
        self.seen.append(("GET", self.path, ""))
        self._answer(ORDERS)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
        self.seen.append(("POST", self.path, body))
        self._answer({"ok": True})

    def _answer(self, value: Any) -> None:
        payload = json.dumps(value).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        return None


def _api(base: str, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    request = urllib.request.Request(base + path, method=method, data=json.dumps(body).encode() if body else None,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _log(base: str, path: str) -> str:
    """A try's log, its lines joined (shown when a state differs)."""
    status, body = _api(base, "GET", f"{path}?full_content=true")
    return "\n".join(str(line.get("event")) for line in body["content"]) if status == 200 else f"{status}: {body}"


def _eventually(predicate: Any, timeout: float, what: str, process: subprocess.Popen[bytes]) -> Any:
    import time

    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        assert process.poll() is None, f"updraft local ended (exit {process.returncode}) before {what}"
        assert time.monotonic() < deadline, f"no {what} after {timeout} s"
        time.sleep(0.5)
    return value


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The orders pipeline's run in `updraft local`: its run and task instances (from the API), what the HTTP
    service saw, the database file and the embedded AWS's address."""
    installed_providers()  # a clear failure naming `make install` when the providers are not in the cache
    root = tmp_path_factory.mktemp("orders")
    (root / "dags").mkdir()
    shutil.copy(HERE / "dags" / "orders_pipeline.py", root / "dags")
    shutil.copy(REQUIREMENTS, root / "requirements.txt")  # found beside the DAGs folder: no --requirements
    database = root / "reports.db"
    OrdersApi.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), OrdersApi)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    home = root / "home"
    env = {**os.environ, "UPDRAFT_HOME": str(home), "PIP_NO_INDEX": "1",
           "AIRFLOW_CONN_ORDERS_API": f"http://127.0.0.1:{server.server_address[1]}",
           "AIRFLOW_CONN_REPORTS_DB": "sqlite://" + urllib.parse.quote(str(database), safe="")}
    env.pop("AWS_ENDPOINT_URL", None)
    process = local_process.start(["local", "--dags-folder", str(root / "dags"), "--tick-seconds", "0.5",
                                   "--workers", "2"], cwd=root, env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
    try:
        endpoint = home / "local.json"
        _eventually(endpoint.is_file, WAIT_S, "local.json", process)
        started = json.loads(endpoint.read_text())
        api = started["api_url"]
        _eventually(lambda: _api(api, "GET", "/api/v2/dags/orders_pipeline")[0] == 200, WAIT_S, "parsed DAG",
                    process)
        assert _api(api, "PATCH", "/api/v2/dags/orders_pipeline", {"is_paused": False})[0] == 200
        status, run = _api(api, "POST", "/api/v2/dags/orders_pipeline/dagRuns",
                           {"dag_run_id": "orders_2024_03_05", "logical_date": "2024-03-05T00:00:00Z"})
        assert status == 200, run
        path = "/api/v2/dags/orders_pipeline/dagRuns/orders_2024_03_05"
        _eventually(lambda: _api(api, "GET", path)[1].get("state") in ("success", "failed"), WAIT_S, "finished run",
                    process)
        tis = _api(api, "GET", f"{path}/taskInstances")[1]["task_instances"]
        logs = {ti["task_id"]: _log(api, f"{path}/taskInstances/{ti['task_id']}/logs/{ti['try_number']}")
                for ti in tis if ti["try_number"]}
        yield {"run": _api(api, "GET", path)[1], "tis": {ti["task_id"]: ti for ti in tis}, "logs": logs,
               "http": list(OrdersApi.seen), "database": database, "aws": started["endpoint_url"]}
    finally:
        local_process.stop(process)
        server.shutdown()
        server.server_close()


def test_the_run_ends_with_airflows_states_and_try_numbers(pipeline: dict[str, Any]) -> None:
    table = {task_id: (ti["state"], ti["try_number"]) for task_id, ti in pipeline["tis"].items()}
    assert table == {task_id: ("success", 1) for task_id in (
        "fetch_orders", "create_bucket", "archive_orders", "create_table", "load_orders", "check_orders",
        "total_orders", "post_total")}, "\n\n".join(f"{task}:\n{log}" for task, log in pipeline["logs"].items())
    assert pipeline["run"]["state"] == "success"


def test_http_operator_called_the_service_with_its_templated_request(pipeline: dict[str, Any]) -> None:
    get, post = pipeline["http"]
    assert get[:2] == ("GET", "/orders?day=2024-03-05")
    assert post[:2] == ("POST", "/totals")
    assert json.loads(post[2]) == {"day": "2024-03-05", "total": [[3, 49.75]]}


def test_sql_operators_loaded_sqlite(pipeline: dict[str, Any]) -> None:
    with sqlite3.connect(pipeline["database"]) as db:
        rows = db.execute("SELECT day, id, amount FROM orders ORDER BY id").fetchall()
    assert rows == [("2024-03-05", 1, 12.5), ("2024-03-05", 2, 30.0), ("2024-03-05", 3, 7.25)]


def test_s3_operator_archived_the_orders_in_the_embedded_aws(pipeline: dict[str, Any]) -> None:
    s3 = boto3.client("s3", endpoint_url=pipeline["aws"], region_name="us-east-1",
                      aws_access_key_id=LOCAL_CREDENTIALS["AWS_ACCESS_KEY_ID"],
                      aws_secret_access_key=LOCAL_CREDENTIALS["AWS_SECRET_ACCESS_KEY"])
    body = s3.get_object(Bucket="orders-archive", Key="orders/2024-03-05.json")["Body"].read()
    assert json.loads(body) == ORDERS
