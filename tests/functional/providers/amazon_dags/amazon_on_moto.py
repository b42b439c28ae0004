"""The real amazon provider's operators, sensors and hooks, unchanged, on `updraft dags test`'s embedded AWS.

No `aws_default` connection exists: every hook falls back to boto3's default chain, which in a task's process holds
the DAG-code role's credentials and the embedded AWS's address. `effects` reads back what the others wrote (and
their XComs) and prints it as one JSON line (`EFFECTS {...}`) for the test to check.
"""

from __future__ import annotations

import io
import json
import time
import zipfile
from datetime import datetime, timedelta

from airflow.providers.amazon.aws.hooks.dynamodb import DynamoDBHook
from airflow.providers.amazon.aws.hooks.s3 import S3Hook
from airflow.providers.amazon.aws.hooks.sns import SnsHook
from airflow.providers.amazon.aws.hooks.sqs import SqsHook
from airflow.providers.amazon.aws.operators.lambda_function import (
    LambdaCreateFunctionOperator,
    LambdaInvokeFunctionOperator,
)
from airflow.providers.amazon.aws.operators.s3 import (
    S3CopyObjectOperator,
    S3CreateBucketOperator,
    S3CreateObjectOperator,
    S3DeleteObjectsOperator,
    S3ListOperator,
)
from airflow.providers.amazon.aws.operators.sns import SnsPublishOperator
from airflow.providers.amazon.aws.operators.sqs import SqsPublishOperator
from airflow.providers.amazon.aws.sensors.s3 import S3KeySensor
from airflow.providers.amazon.aws.sensors.sqs import SqsSensor
from airflow.sdk import DAG, task

BUCKET = "updraft-provider-e2e"
TABLE = "provider-e2e"


def _lambda_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("handler.py", "def handler(event, context):\n    return {'echo': event}\n")
    return buffer.getvalue()


with DAG("amazon_on_moto", schedule=None, start_date=datetime(2024, 1, 1), catchup=False):
    # -- S3 ------------------------------------------------------------------------------------------------------
    create_bucket = S3CreateBucketOperator(task_id="create_bucket", bucket_name=BUCKET)
    create_object = S3CreateObjectOperator(task_id="create_object", s3_bucket=BUCKET,
                                           s3_key="reports/{{ ds }}/run.txt",
                                           data="{{ run_id }} of {{ dag.dag_id }} at {{ ds_nodash }}")
    list_keys = S3ListOperator(task_id="list_keys", bucket=BUCKET, prefix="reports/")
    copy_object = S3CopyObjectOperator(task_id="copy_object", source_bucket_name=BUCKET, dest_bucket_name=BUCKET,
                                       source_bucket_key="reports/{{ ds }}/run.txt",
                                       dest_bucket_key="copies/{{ ds }}.txt")
    key_poke = S3KeySensor(task_id="key_poke", bucket_name=BUCKET, bucket_key="copies/{{ ds }}.txt",
                           mode="poke", poke_interval=1, timeout=60)

    @task
    def write_marker_later():
        time.sleep(4)  # the sensors below have looked once, found nothing, and wait
        S3Hook().load_string("ready", key="late/marker", bucket_name=BUCKET)

    key_reschedule = S3KeySensor(task_id="key_reschedule", bucket_name=BUCKET, bucket_key="late/marker",
                                 mode="reschedule", poke_interval=2, timeout=120)
    key_deferrable = S3KeySensor(task_id="key_deferrable", bucket_name=BUCKET, bucket_key="late/marker",
                                 deferrable=True, poke_interval=2, timeout=120)
    delete_objects = S3DeleteObjectsOperator(task_id="delete_copies", bucket=BUCKET, prefix="copies/")

    # -- SQS, SNS ------------------------------------------------------------------------------------------------
    @task
    def create_queues():
        sqs = SqsHook()
        work = sqs.create_queue("work")["QueueUrl"]
        notes = sqs.create_queue("notes")["QueueUrl"]
        notes_arn = sqs.conn.get_queue_attributes(QueueUrl=notes, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        topic = SnsHook().conn.create_topic(Name="alerts")["TopicArn"]
        SnsHook().conn.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=notes_arn,
                                 Attributes={"RawMessageDelivery": "true"})
        return {"work": work, "notes": notes, "topic": topic}

    queues = create_queues()
    sqs_publish = SqsPublishOperator(task_id="sqs_publish", sqs_queue="{{ ti.xcom_pull('create_queues')['work'] }}",
                                     message_content="hello {{ ds }}")
    sqs_sensor = SqsSensor(task_id="sqs_sensor", sqs_queue="{{ ti.xcom_pull('create_queues')['work'] }}",
                           max_messages=1, wait_time_seconds=1, poke_interval=1, timeout=60)
    sns_publish = SnsPublishOperator(task_id="sns_publish", target_arn="{{ ti.xcom_pull('create_queues')['topic'] }}",
                                     message="alert for {{ ds }}", subject="e2e")

    # -- DynamoDB through its hook ---------------------------------------------------------------------------------
    @task
    def dynamodb_write():
        hook = DynamoDBHook(table_name=TABLE, table_keys=["pk"])
        hook.conn.create_table(TableName=TABLE, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                               AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                               BillingMode="PAY_PER_REQUEST")
        return hook.write_batch_data([{"pk": "a", "value": 1}, {"pk": "b", "value": 2}])

    # -- Lambda (moto runs function code only in Docker) -----------------------------------------------------------
    @task
    def lambda_role():
        from airflow.providers.amazon.aws.hooks.base_aws import AwsBaseHook

        iam = AwsBaseHook(client_type="iam").conn
        trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                          "Principal": {"Service": "lambda.amazonaws.com"}}]}
        return iam.create_role(RoleName="e2e-lambda", AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"]

    lambda_create = LambdaCreateFunctionOperator(
        task_id="lambda_create", function_name="e2e-echo", runtime="python3.12", handler="handler.handler",
        role="{{ ti.xcom_pull('lambda_role') }}", code={"ZipFile": _lambda_zip()})
    lambda_invoke = LambdaInvokeFunctionOperator(task_id="lambda_invoke", function_name="e2e-echo",
                                                 payload=json.dumps({"day": "{{ ds }}"}), retries=1,
                                                 retry_delay=timedelta(seconds=1))

    # -- what the embedded AWS holds afterwards --------------------------------------------------------------------
    @task(trigger_rule="all_done")
    def effects(queue_urls, listed, ti=None):
        s3 = S3Hook()
        notes = SqsHook().conn.receive_message(QueueUrl=queue_urls["notes"], MaxNumberOfMessages=10,
                                               WaitTimeSeconds=1).get("Messages", [])
        table = DynamoDBHook(table_name=TABLE).conn.Table(TABLE)
        found = {
            "object": s3.read_key("reports/2024-03-05/run.txt", BUCKET),
            "keys": sorted(s3.list_keys(BUCKET)),
            "notes": [message["Body"] for message in notes],
            "items": sorted((item["pk"], int(item["value"])) for item in table.scan()["Items"]),
            "listed": listed,  # S3ListOperator's XCom
            "received": [message["Body"] for message in ti.xcom_pull(task_ids="sqs_sensor", key="messages")],
        }
        print("EFFECTS " + json.dumps(found))

    create_bucket >> create_object >> list_keys >> copy_object >> key_poke >> delete_objects
    create_bucket >> write_marker_later()
    create_bucket >> [key_reschedule, key_deferrable]
    queues >> sqs_publish >> sqs_sensor
    queues >> sns_publish
    lambda_role() >> lambda_create >> lambda_invoke
    [delete_objects, key_reschedule, key_deferrable, sqs_sensor, sns_publish, lambda_invoke,
     dynamodb_write()] >> effects(queues, list_keys.output)
