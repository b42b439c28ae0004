"""A task returns an ``ObjectStoragePath`` on S3 (moto) and the next task gets it back from XCom and reads the
object through it, as in Airflow's object-storage tutorial; the XCom is stored in serde's tagged shape."""

from __future__ import annotations

import boto3
from moto import mock_aws

from tests.functional.deferrals.defer_harness import DeferralEnv

BODY = """
from airflow.sdk import ObjectStoragePath

base = ObjectStoragePath("s3://aws_default@tutorial-data/")

@dag(schedule=None, start_date=START)
def object_storage():
    @task
    def write(**context) -> ObjectStoragePath:
        base.mkdir(exist_ok=True)
        path = base / f"air_quality_{context['logical_date'].format('YYYYMMDD')}.csv"
        with path.open("wb") as file:
            file.write(b"pm10,pm2_5\\n1.0,2.0\\n")
        return path

    @task
    def analyze(path: ObjectStoragePath):
        assert isinstance(path, ObjectStoragePath) and path.conn_id == "aws_default"
        print("read", path.read_text().splitlines()[1], "from", path)
        return [p.name for p in base.iterdir()]

    analyze(write())

object_storage()
"""


def test_an_object_storage_path_passes_through_xcom_and_reads_the_object(tmp_path):
    with mock_aws():
        env = DeferralEnv(tmp_path, parallelism=2)
        env.in_process = True  # the tasks' boto3 calls reach this process's moto
        env.add("object_storage", BODY)
        run = env.run("object_storage", logical_date=None)
        assert env.states("object_storage", run.run_id) == {"write": "success", "analyze": "success"}
        key = next(iter(boto3.client("s3").list_objects_v2(Bucket="tutorial-data")["Contents"]))["Key"]
        assert env.xcom("object_storage", run.run_id, "write") == {
            "__classname__": "airflow.sdk.io.path.ObjectStoragePath", "__version__": 1,
            "__data__": {"path": f"s3://aws_default@tutorial-data/{key}", "conn_id": "aws_default", "kwargs": {}}}
        assert env.xcom("object_storage", run.run_id, "analyze") == [key]
        assert f"read 1.0,2.0 from s3://aws_default@tutorial-data/{key}" in env.log("object_storage", run.run_id,
                                                                                     "analyze")
