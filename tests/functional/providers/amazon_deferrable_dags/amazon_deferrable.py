"""The real amazon provider's deferrable SqsSensor on `updraft dags test`'s embedded AWS: its SqsSensorTrigger runs
on aiobotocore (the provider's extra) in the trigger-check child, with the DAG-code role's credentials."""

from __future__ import annotations

from datetime import datetime

from airflow.providers.amazon.aws.hooks.sqs import SqsHook
from airflow.providers.amazon.aws.operators.sqs import SqsPublishOperator
from airflow.providers.amazon.aws.sensors.sqs import SqsSensor
from airflow.sdk import DAG, task

with DAG("amazon_deferrable", schedule=None, start_date=datetime(2024, 1, 1), catchup=False):
    @task
    def create_queue():
        return SqsHook().get_conn().create_queue(QueueName="deferred-e2e")["QueueUrl"]

    queue = create_queue()
    publish = SqsPublishOperator(task_id="publish", sqs_queue=queue, message_content="deferred {{ ds }}")
    wait = SqsSensor(task_id="wait", sqs_queue=queue, deferrable=True, max_messages=1, wait_time_seconds=1,
                     poke_interval=1, timeout=60)

    @task
    def received(ti=None):
        print("RECEIVED " + "|".join(m["Body"] for m in ti.xcom_pull(task_ids="wait", key="messages")))

    publish >> wait >> received()
