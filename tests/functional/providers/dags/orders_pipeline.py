"""A DAG written for Airflow 3 with the amazon, http and common-sql providers, as a user would write it: nothing in
it is Updraft's. It runs unchanged in `updraft local` given only the providers in a requirements.txt beside its
DAGs folder and its connections as AIRFLOW_CONN_* URIs (`orders_api`: an HTTP service, `reports_db`: SQLite).

Fetch the day's orders from the API, archive them to S3, load them into SQLite, check and total them there, and
post the total back to the API.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from airflow.providers.amazon.aws.operators.s3 import S3CreateBucketOperator, S3CreateObjectOperator
from airflow.providers.common.sql.operators.sql import SQLCheckOperator, SQLExecuteQueryOperator
from airflow.providers.http.operators.http import HttpOperator
from airflow.sdk import DAG

with DAG(
    dag_id="orders_pipeline",
    schedule=None,
    start_date=datetime(2024, 1, 1),
    catchup=False,
    default_args={"retries": 1, "retry_delay": timedelta(seconds=1)},
    tags=["providers"],
):
    fetch_orders = HttpOperator(
        task_id="fetch_orders",
        http_conn_id="orders_api",
        method="GET",
        endpoint="orders",
        data={"day": "{{ ds }}"},
        response_filter=lambda response: response.json(),
        log_response=True,
    )
    create_bucket = S3CreateBucketOperator(task_id="create_bucket", bucket_name="orders-archive")
    archive_orders = S3CreateObjectOperator(
        task_id="archive_orders",
        s3_bucket="orders-archive",
        s3_key="orders/{{ ds }}.json",
        data="{{ ti.xcom_pull(task_ids='fetch_orders') | tojson }}",
        replace=True,
    )
    create_table = SQLExecuteQueryOperator(
        task_id="create_table",
        conn_id="reports_db",
        sql="CREATE TABLE IF NOT EXISTS orders (day TEXT, id INTEGER, amount REAL)",
    )
    load_orders = SQLExecuteQueryOperator(
        task_id="load_orders",
        conn_id="reports_db",
        sql="""
            INSERT INTO orders (day, id, amount) VALUES
            {% for order in ti.xcom_pull(task_ids='fetch_orders') %}
                ('{{ ds }}', {{ order.id }}, {{ order.amount }}){{ "," if not loop.last }}
            {% endfor %}
        """,
    )
    check_orders = SQLCheckOperator(
        task_id="check_orders",
        conn_id="reports_db",
        sql="SELECT COUNT(*) FROM orders WHERE day = '{{ ds }}'",
    )
    total_orders = SQLExecuteQueryOperator(
        task_id="total_orders",
        conn_id="reports_db",
        sql="SELECT COUNT(*), SUM(amount) FROM orders WHERE day = '{{ ds }}'",
    )
    post_total = HttpOperator(
        task_id="post_total",
        http_conn_id="orders_api",
        method="POST",
        endpoint="totals",
        data='{"day": "{{ ds }}", "total": {{ ti.xcom_pull(task_ids="total_orders") | tojson }}}',
        headers={"Content-Type": "application/json"},
    )

    fetch_orders >> [create_bucket, create_table]
    create_bucket >> archive_orders
    create_table >> load_orders >> check_orders >> total_orders >> post_total
