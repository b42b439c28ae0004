"""The real http provider (HttpOperator, HttpSensor in poke, reschedule and deferrable modes, HttpHook) run by
`updraft dags test --requirements` against a local HTTP server, with Airflow 3.3's states and try numbers."""

from __future__ import annotations

import collections
import threading

import pytest
from service_fakes import Reply, Request, http_server
from service_runs import dags_test

pytestmark = pytest.mark.slow

NOT_READY_HITS = 1  # a ready/<name> endpoint answers 404 this many times, then 200


def _fake_service():
    hits: collections.Counter[str] = collections.Counter()
    lock = threading.Lock()

    def respond(request: Request) -> Reply:
        with lock:
            hits[request.path] += 1
            n = hits[request.path]
        if request.method == "POST" and request.path.startswith("/items/"):
            return Reply(200, {"stored": True, "received": request.json()})
        if request.path == "/ready/never" or (request.path.startswith("/ready/") and n <= NOT_READY_HITS):
            return Reply(404, "not yet")
        if request.path.startswith("/ready/"):
            return Reply(200, {"ready": True})
        if request.path == "/status":
            return Reply(200, {"status": "broken"})
        if request.path == "/counter":
            return Reply(200, {"checks": n})
        if request.path == "/echo":
            return Reply(200, {"query": request.query, "from": request.headers.get("X-From")})
        return Reply(500, "boom")

    return respond


def test_http_operator_sensor_and_hook(tmp_path):
    with http_server(_fake_service()) as fake:
        run = dags_test("http", "http_provider", tmp_path, {"AIRFLOW_CONN_HTTP_E2E": fake.url})
    run.check({
        "post": ("success", 1), "record": ("success", 1),
        # A failing response_check fails the try; its retry asks again and fails for good.
        "check_fails": ("failed", 2),
        "server_error": ("failed", 1),
        # A sensor keeps its try number across pokes, reschedules and a deferral.
        "poke": ("success", 1), "reschedule": ("success", 1), "deferred": ("success", 1),
        "checked_sensor": ("success", 1),
        # A sensor's timeout fails it without using its retries (AirflowSensorTimeout).
        "times_out": ("failed", 1),
        "through_hook": ("success", 1),
    })
    assert run.run_state == "failed"

    posted = [r for r in fake.requests if r.method == "POST"]
    assert [(r.path, r.json(), r.headers["X-Try"]) for r in posted] == [
        ("/items/2024-03-05", {"day": "2024-03-05", "run": "manual__2024-03-05T00:00:00+00:00"}, "1")]
    # response_filter's value (it asked for the context's ds too) is the XCom the next task pulled.
    assert run.recorded("post") == {"echo": {"day": "2024-03-05", "run": "manual__2024-03-05T00:00:00+00:00"},
                                    "ds": "2024-03-05"}
    paths = fake.paths("GET")
    assert paths.count("/status") == 2  # one request per try
    assert paths.count("/broken") == 1
    for sensor in ("poke", "reschedule", "deferred"):  # 404s are "not yet": asked again until the 200
        assert paths.count(f"/ready/{sensor}") == NOT_READY_HITS + 1, sensor
    assert paths.count("/counter") == 2
    assert paths.count("/ready/never") == 2  # the first poke, and the one after its 30 s timeout
    assert run.recorded("through_hook") == {"status": 200, "body": {"query": {"q": ["updraft"]}, "from": "hook"}}
    print(f"http_provider: {run.wall_s:.1f} s")
