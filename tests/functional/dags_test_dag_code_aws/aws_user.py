"""DAG code using AWS in `updraft dags test`: a task's boto3 calls (as the DAG-code role) and a deferrable S3 wait
(Updraft's own S3KeySensor: the real provider is not installed here) on the test's embedded AWS."""

import time
from datetime import datetime

import boto3

from airflow.providers.amazon.aws.sensors.s3 import S3KeySensor
from airflow.sdk import DAG, task

BUCKET = "dag-code-bucket"

with DAG("aws_user", schedule=None, start_date=datetime(2024, 1, 1)):

    @task
    def make_bucket():
        boto3.client("s3").create_bucket(Bucket=BUCKET)

    @task
    def who_am_i():
        arn = boto3.client("sts").get_caller_identity()["Arn"]
        role = arn.split("/")[-2]  # arn:aws:sts::ACCOUNT:assumed-role/ROLE/SESSION
        if role != "updraft-dags-test-dag-code":
            raise ValueError(f"DAG code runs as {arn}, not the DAG-code role")

    @task
    def write_later():
        time.sleep(2)  # after the sensor deferred
        boto3.client("s3").put_object(Bucket=BUCKET, Key="incoming/ready", Body=b"go")

    ready = S3KeySensor(task_id="ready", bucket_name=BUCKET, bucket_key="incoming/ready", deferrable=True,
                        poke_interval=1, timeout=300)

    made = make_bucket()
    made >> [who_am_i(), write_later(), ready]
