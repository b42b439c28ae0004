"""User code in local mode holds the DAG-code role's credentials, as on AWS (issue 18): local mode creates the role
on its embedded AWS, tasks get its STS credentials (never local mode's own), and a deferrable S3 wait is looked at
with them by the check, so `updraft local` runs what a deployed environment runs (issue 16). One system for the
module (its start is most of the time)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from local_helpers import eventually, now, quick_system

from updraft.local.system import LocalSystem
from updraft.model.records import TIKey
from updraft.scheduling.commands.triggering import trigger_dag

pytestmark = pytest.mark.slow

WAIT_S = 60.0  # a try in a fresh local worker takes ~8 s on a loaded 2-core machine

DAG_FILE = """
    from datetime import datetime

    import boto3
    from airflow.sdk import DAG, task
    from airflow.providers.amazon.aws.sensors.s3 import S3KeySensor

    with DAG("aws_reader", schedule=None, start_date=datetime(2024, 1, 1)):
        @task
        def who():
            keys = boto3.client("s3").list_objects_v2(Bucket="{bucket}", Prefix="dags/").get("KeyCount", 0)
            return {{"arn": boto3.client("sts").get_caller_identity()["Arn"], "dag_files": keys}}

        ready = S3KeySensor(task_id="ready", bucket_name="{bucket}", bucket_key="incoming/ready", deferrable=True,
                            poke_interval=1, timeout=600)
        who() >> ready
"""


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSystem]:
    with quick_system(tmp_path_factory.mktemp("local_dag_code_role"),
                      lambda started: {"aws_reader.py": DAG_FILE.format(bucket=started.names.bucket)}) as started:
        yield started


def test_tasks_and_deferrable_s3_waits_run_with_the_dag_code_role(system: LocalSystem) -> None:
    store = system.services.store
    eventually(lambda: store.get_dag_meta("aws_reader") is not None and not store.get_dag_meta("aws_reader").is_paused)
    trigger_dag(store, "aws_reader", now=now(), run_id="r")
    key = TIKey("aws_reader", "r", "ready")
    eventually(lambda: (ti := store.get_ti(key)) is not None and ti.state.value == "deferred", timeout=WAIT_S)
    identity = store.get_xcom(TIKey("aws_reader", "r", "who"), "return_value")
    assert identity["arn"].split("/")[-2] == system.names.dag_code_role  # assumed-role/<role>/<session>
    assert identity["dag_files"] == 1  # the role reads the environment's dags/ as the stack's may
    system._client("s3").put_object(Bucket=system.names.bucket, Key="incoming/ready", Body=b"")
    eventually(lambda: store.get_ti(key).state.value == "success", timeout=WAIT_S)
    eventually(lambda: store.get_run("aws_reader", "r").state.value == "success", timeout=WAIT_S)
