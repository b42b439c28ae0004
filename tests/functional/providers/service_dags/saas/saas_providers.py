"""The slack, databricks, snowflake and smtp providers' operators (and the Slack webhook notifier as a failure
callback), unchanged from Airflow's providers, against the test's local fakes of those services. ``record``
writes what it pulled to ``$E2E_OUT/<name>.json`` for the test to read."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

from airflow.providers.databricks.operators.databricks import (
    DatabricksRunNowOperator,
    DatabricksSubmitRunOperator,
)
from airflow.providers.slack.notifications.slack_webhook import SlackWebhookNotifier
from airflow.providers.slack.operators.slack_webhook import SlackWebhookOperator
from airflow.providers.smtp.operators.smtp import EmailOperator
from airflow.providers.snowflake.operators.snowflake import SnowflakeSqlApiOperator
from airflow.sdk import DAG, task

NOTEBOOK = {"task_key": "main", "existing_cluster_id": "1234-abcd",
            "notebook_task": {"notebook_path": "/Shared/nightly", "base_parameters": {"day": "{{ ds }}"}}}

with DAG("saas_providers", schedule=None, start_date=dt.datetime(2024, 1, 1),
         default_args={"retry_delay": dt.timedelta(seconds=1)}):
    slack = SlackWebhookOperator(task_id="slack", slack_webhook_conn_id="slack_e2e",
                                 message="run {{ run_id }} of {{ dag.dag_id }} on {{ ds }}",
                                 blocks=[{"type": "section", "text": {"type": "mrkdwn", "text": "*{{ ds }}*"}}])
    slack_rejected = SlackWebhookOperator(task_id="slack_rejected", slack_webhook_conn_id="slack_revoked",
                                          message="never shown")

    @task(on_failure_callback=SlackWebhookNotifier(slack_webhook_conn_id="slack_e2e",
                                                   text="{{ ti.task_id }} failed on {{ ds }} (try {{ ti.try_number }})"))
    def notified_failure():
        raise ValueError("the load broke")

    submit = DatabricksSubmitRunOperator(
        task_id="submit", databricks_conn_id="databricks_e2e", polling_period_seconds=1,
        json={"run_name": "nightly {{ ds }}", "tasks": [NOTEBOOK]})
    submit_fails = DatabricksSubmitRunOperator(
        task_id="submit_fails", databricks_conn_id="databricks_e2e", polling_period_seconds=1, retries=1,
        run_name="failing {{ ds }}", tasks=[NOTEBOOK])
    submit_deferred = DatabricksSubmitRunOperator(
        task_id="submit_deferred", databricks_conn_id="databricks_e2e", polling_period_seconds=1, deferrable=True,
        json={"run_name": "deferred {{ ds }}", "tasks": [NOTEBOOK]})
    run_now = DatabricksRunNowOperator(task_id="run_now", databricks_conn_id="databricks_e2e", job_id=42,
                                       job_parameters={"day": "{{ ds }}"}, polling_period_seconds=1)
    run_now_fails = DatabricksRunNowOperator(task_id="run_now_fails", databricks_conn_id="databricks_e2e",
                                             job_id=43, polling_period_seconds=1)

    snowflake = SnowflakeSqlApiOperator(
        task_id="snowflake", snowflake_conn_id="snowflake_e2e", statement_count=2, poll_interval=1,
        sql="INSERT INTO sales VALUES ('{{ ds }}', 10); SELECT COUNT(*) FROM sales")
    snowflake_fails = SnowflakeSqlApiOperator(task_id="snowflake_fails", snowflake_conn_id="snowflake_e2e",
                                              statement_count=1, poll_interval=1,
                                              sql="SELECT * FROM no_such_table")

    email = EmailOperator(task_id="email", conn_id="smtp_e2e", to=["ops@example.com", "data@example.com"],
                          from_email="updraft@example.com", subject="Run {{ ds }} done",
                          html_content="<p>{{ dag.dag_id }} finished {{ run_id }}</p>")

    @task
    def record(ti=None):
        # run_id and run_page_url: what the operator pushed; _link_DatabricksJobRunLink: its "See Databricks Job
        # Run" link, which the try stored once it ended (the API's links route answers it).
        pulled = {task_id: {key: ti.xcom_pull(task_ids=task_id, key=key)
                            for key in ("run_id", "run_page_url", "_link_DatabricksJobRunLink")}
                  for task_id in ("submit", "submit_deferred", "run_now")}
        pulled["snowflake"] = ti.xcom_pull(task_ids="snowflake", key="query_ids")
        Path(os.environ["E2E_OUT"], "xcoms.json").write_text(json.dumps(pulled))

    [submit, submit_deferred, run_now, snowflake] >> record()
    notified_failure()
