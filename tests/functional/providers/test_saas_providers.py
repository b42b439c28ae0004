"""The real slack, databricks, snowflake and smtp providers run by `updraft dags test --requirements` against local
fakes of their services (tests/functional/providers/service_fakes.py), with Airflow 3.3's states and try numbers
and what each service received.

Snowflake's SQL API URL is fixed to ``https://<account>.snowflakecomputing.com``: the DAG's process reaches it
through ``HTTPS_PROXY`` (as behind a corporate proxy), a local proxy that answers for that host itself over TLS
with a test CA's certificate (``REQUESTS_CA_BUNDLE``). Its key-pair authentication uses a key made here.
"""

from __future__ import annotations

import base64
import json

import pytest
from service_fakes import (
    Reply,
    Request,
    databricks_jobs_api,
    http_server,
    https_proxy,
    smtp_server,
    snowflake_sql_api,
)
from service_runs import DagRun, dags_test

pytestmark = pytest.mark.slow

WEBHOOK, REVOKED = "T0001/B0001/secret", "T0001/B0001/revoked"
DATABRICKS_TOKEN = "dapi-test-token"


def _slack_webhooks():
    """hooks.slack.com/services/<token>: "ok" for the webhook's token, 404 "no_service" for any other."""

    def respond(request: Request) -> Reply:
        if request.method == "POST" and request.path == f"/services/{WEBHOOK}":
            return Reply(200, "ok")
        return Reply(404, "no_service")

    return respond


def _key_pair():
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    return key.public_key(), base64.b64encode(pem).decode()


def _verified_claims(token: str, public_key) -> dict:
    """The JWT's claims, once its RS256 signature checks out with ``public_key``."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    def unpad(part: str) -> bytes:
        return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))

    header, claims, signature = token.split(".")
    assert json.loads(unpad(header))["alg"] == "RS256"
    public_key.verify(unpad(signature), f"{header}.{claims}".encode(), padding.PKCS1v15(), hashes.SHA256())
    return json.loads(unpad(claims))


@pytest.fixture(scope="module")
def services(tmp_path_factory):
    public_key, private_key = _key_pair()
    with http_server(_slack_webhooks()) as slack, http_server(databricks_jobs_api(DATABRICKS_TOKEN)) as databricks, \
            https_proxy(snowflake_sql_api(), "snowflakecomputing.com") as snowflake, smtp_server() as smtp:
        slack_conn = {"conn_type": "slackwebhook", "schema": "http", "host": f"127.0.0.1:{slack.port}/services"}
        run = dags_test("saas", "saas_providers", tmp_path_factory.mktemp("saas"), {
            "AIRFLOW_CONN_SLACK_E2E": json.dumps({**slack_conn, "password": WEBHOOK}),
            "AIRFLOW_CONN_SLACK_REVOKED": json.dumps({**slack_conn, "password": REVOKED}),
            "AIRFLOW_CONN_DATABRICKS_E2E": json.dumps({"conn_type": "databricks", "schema": "http",
                                                       "host": "127.0.0.1", "port": databricks.port,
                                                       "password": DATABRICKS_TOKEN}),
            "AIRFLOW_CONN_SNOWFLAKE_E2E": json.dumps({
                "conn_type": "snowflake", "login": "updraft", "schema": "PUBLIC",
                "extra": {"account": "testacct", "database": "ANALYTICS", "warehouse": "LOAD_WH", "role": "LOADER",
                          "private_key_content": private_key}}),
            "AIRFLOW_CONN_SMTP_E2E": json.dumps({"conn_type": "smtp", "host": "127.0.0.1", "port": smtp.port,
                                                 "extra": {"disable_ssl": True, "disable_tls": True}}),
            "HTTPS_PROXY": snowflake.url, "NO_PROXY": "127.0.0.1,localhost", "REQUESTS_CA_BUNDLE": snowflake.ca_file,
        })
        print(f"saas_providers: {run.wall_s:.1f} s")
        yield run, {"slack": slack, "databricks": databricks, "snowflake": snowflake, "smtp": smtp,
                    "snowflake_key": public_key}


def test_states_and_try_numbers(services):
    run: DagRun = services[0]
    run.check({
        "slack": ("success", 1), "slack_rejected": ("failed", 1), "notified_failure": ("failed", 1),
        "submit": ("success", 1), "submit_fails": ("failed", 2), "submit_deferred": ("success", 1), "run_now": ("success", 1),
        "run_now_fails": ("failed", 1),
        "snowflake": ("success", 1), "snowflake_fails": ("failed", 1),
        "email": ("success", 1), "record": ("success", 1),
    })
    assert run.run_state == "failed"


def test_slack_webhook_operator_and_notifier(services):
    run, fakes = services
    posted = [r.json() for r in fakes["slack"].requests if r.path == f"/services/{WEBHOOK}"]
    assert {"text": "run manual__2024-03-05T00:00:00+00:00 of saas_providers on 2024-03-05",
            "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "*2024-03-05*"}}]} in posted
    # The notifier, the failing task's on_failure_callback, rendered its template with the failed try's context.
    assert {"text": "notified_failure failed on 2024-03-05 (try 1)"} in posted
    assert len(posted) == 2
    assert fakes["slack"].paths("POST").count(f"/services/{REVOKED}") == 1
    assert "no_service" in run.log("slack_rejected")


def test_databricks_submit_and_run_now(services):
    run, fakes = services
    calls = [(r.method, r.path, r.json() if r.method == "POST" else None) for r in fakes["databricks"].requests]
    submitted = [body for method, path, body in calls if path == "/api/2.2/jobs/runs/submit"]
    notebook = {"task_key": "main", "existing_cluster_id": "1234-abcd",
                "notebook_task": {"notebook_path": "/Shared/nightly", "base_parameters": {"day": "2024-03-05"}}}
    assert {"run_name": "nightly 2024-03-05", "tasks": [notebook]} in submitted
    assert submitted.count({"run_name": "failing 2024-03-05", "tasks": [notebook]}) == 2  # one per try
    # The provider sends numbers as strings (its normalise_json_content), as the Jobs API accepts.
    started = sorted(body["job_id"] for method, path, body in calls if path == "/api/2.2/jobs/run-now")
    assert started == ["42", "43"]
    assert {"job_id": "42", "job_parameters": {"day": "2024-03-05"}} in [
        body for method, path, body in calls if path == "/api/2.2/jobs/run-now"]
    # The deferrable submit found its run still running, deferred, and its trigger (the provider's, in the
    # trigger-check child, over aiohttp) polled runs/get until the run ended.
    deferred = run.log("submit_deferred")
    assert "DatabricksExecutionTrigger" in deferred and "Job run completed successfully." in deferred
    deferred_id = run.recorded("xcoms")["submit_deferred"]["run_id"]
    polls = [r for r in fakes["databricks"].requests if r.path == "/api/2.2/jobs/runs/get"
             and (r.query.get("run_id") == [str(deferred_id)] or (r.body and r.json()["run_id"] == deferred_id))]
    # PENDING, RUNNING x4, TERMINATED: the operator asked three times (query string) before deferring, its trigger
    # (a JSON body, as the async hook sends) the rest, at least up to the TERMINATED answer (the sixth).
    kinds = [bool(r.body) for r in polls]
    assert kinds[:3] == [False] * 3 and set(kinds[3:]) == {True} and len(kinds) >= 6, kinds
    assert "TERMINATED" in run.log("run_now_fails") and "FAILED" in run.log("run_now_fails")
    xcoms = run.recorded("xcoms")
    for task_id in ("submit", "submit_deferred", "run_now"):
        run_id = xcoms[task_id]["run_id"]
        assert isinstance(run_id, int)
        assert xcoms[task_id]["run_page_url"].endswith(f"/run/{run_id}")
        # The operator's extra link, stored by the try as it ended: the run page the operator pushed.
        assert xcoms[task_id]["_link_DatabricksJobRunLink"] == xcoms[task_id]["run_page_url"]


def test_snowflake_sql_api(services):
    run, fakes = services
    requests = fakes["snowflake"].requests
    posted = [r.json() for r in requests if r.method == "POST"]
    assert sorted((p["statement"], p["parameters"]["MULTI_STATEMENT_COUNT"], p["database"], p["warehouse"],
                   p["role"]) for p in posted) == [
        ("INSERT INTO sales VALUES ('2024-03-05', 10); SELECT COUNT(*) FROM sales", 2, "ANALYTICS", "LOAD_WH",
         "LOADER"),
        ("SELECT * FROM no_such_table", 1, "ANALYTICS", "LOAD_WH", "LOADER"),
    ]
    assert all(r.headers["Host"].startswith("testacct.snowflakecomputing.com") for r in requests)
    claims = {json.dumps(_verified_claims(r.headers["Authorization"].removeprefix("Bearer "),
                                          fakes["snowflake_key"]), sort_keys=True) for r in requests}
    assert all(json.loads(c)["sub"] == "TESTACCT.UPDRAFT" for c in claims)
    assert run.recorded("xcoms")["snowflake"] == ["01b-0000", "01b-0001"]
    assert "Object 'NO_SUCH_TABLE' does not exist" in run.log("snowflake_fails")


def test_email_operator(services):
    _run, fakes = services
    [(sender, recipients, message)] = fakes["smtp"].server.mails
    assert sender == "updraft@example.com"
    assert recipients == ["ops@example.com", "data@example.com"]
    assert message["Subject"] == "Run 2024-03-05 done"
    [html] = [part for part in message.walk() if part.get_content_type() == "text/html"]
    assert html.get_payload(decode=True).decode() == "<p>saas_providers finished manual__2024-03-05T00:00:00+00:00</p>"
