"""The http provider's operator, sensor (poke, reschedule, deferrable) and hook, unchanged from Airflow's provider,
against the test's local HTTP server (connection ``http_e2e``). ``record`` writes what it received to
``$E2E_OUT/<task_id>.json`` for the test to read."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

from airflow.providers.http.hooks.http import HttpHook
from airflow.providers.http.operators.http import HttpOperator
from airflow.providers.http.sensors.http import HttpSensor
from airflow.sdk import DAG, task


def _record(name: str, value: object) -> None:
    Path(os.environ["E2E_OUT"], f"{name}.json").write_text(json.dumps(value))


with DAG("http_provider", schedule=None, start_date=dt.datetime(2024, 1, 1),
         default_args={"http_conn_id": "http_e2e", "retry_delay": dt.timedelta(seconds=1)}):
    post = HttpOperator(
        task_id="post", endpoint="items/{{ ds }}", method="POST", data='{"day": "{{ ds }}", "run": "{{ run_id }}"}',
        headers={"Content-Type": "application/json", "X-Try": "{{ ti.try_number }}"},
        response_check=lambda response: response.json()["stored"] is True,
        response_filter=lambda response, ds: {"echo": response.json()["received"], "ds": ds})
    check_fails = HttpOperator(task_id="check_fails", endpoint="status", method="GET", retries=1,
                               response_check=lambda response: response.json()["status"] == "ok")
    server_error = HttpOperator(task_id="server_error", endpoint="broken", method="GET")

    poke = HttpSensor(task_id="poke", endpoint="ready/poke", poke_interval=0.5, timeout=30)
    reschedule = HttpSensor(task_id="reschedule", endpoint="ready/reschedule", mode="reschedule",
                            poke_interval=30, timeout=600)
    deferred = HttpSensor(task_id="deferred", endpoint="ready/deferred", deferrable=True, poke_interval=0.5,
                          timeout=60)
    times_out = HttpSensor(task_id="times_out", endpoint="ready/never", mode="reschedule", poke_interval=30,
                           timeout=30, retries=2)
    checked_sensor = HttpSensor(task_id="checked_sensor", endpoint="counter", poke_interval=0.5, timeout=30,
                                response_check=lambda response, ti: response.json()["checks"] >= 2)

    @task
    def record(posted):
        _record("post", posted)

    @task
    def through_hook():
        hook = HttpHook(method="GET", http_conn_id="http_e2e")
        response = hook.run("echo", data={"q": "updraft"}, headers={"X-From": "hook"})
        _record("through_hook", {"status": response.status_code, "body": response.json()})

    record(post.output)
    through_hook()
