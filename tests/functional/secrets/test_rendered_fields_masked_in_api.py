"""Rendered template fields: recorded by the worker handler on moto, redacted, and served in the API's task
instance responses (issue 14: secrets masked in rendered fields; issue 15: the task page shows them).

One moto environment (KMS key, table, bucket) and one run for the module: a BashOperator and a PythonOperator
whose templates read a metastore connection's password and a sensitive variable.
"""

from __future__ import annotations

import datetime as dt
import tempfile
from types import SimpleNamespace

import boto3
import pytest
from moto import mock_aws

from tests.functional.api.conftest import Api
from tests.functional.lambda_helpers import lambda_context
from tests.functional.scheduling.harness import store_dags
from updraft.executors.recording import RecordingExecutor
from updraft.model.records import TIKey
from updraft.model.states import TaskInstanceState
from updraft.runtime.loader import LocalDagLoader
from updraft.runtime.secrets import forget_secrets_setup
from updraft.scheduling.commands.triggering import trigger_dag
from updraft.scheduling.scheduler import Scheduler
from updraft.sdk import connection, variable
from updraft.secrets.masker import reset_masker
from updraft.store.config import StoreConfig
from updraft.store.connections import ConnectionRecord
from updraft.store.dynamo import DynamoStore
from updraft.store.tables import create_table

TABLE = "updraft-rendered-test"
BUCKET = "updraft-rendered-bucket"
REGION = "us-east-1"
PASSWORD = "s3cr3t-pa55"
TOKEN = "tok-9876543210"
RUN_ID = "manual__rendered"

DAG_FILE = '''
import datetime
from airflow.sdk import DAG
from airflow.providers.standard.operators.bash import BashOperator
from airflow.providers.standard.operators.python import PythonOperator


def connect(login_with, token, host, day):
    raise ValueError("refused by " + host)


with DAG("rendered_dag", schedule=None, start_date=datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)):
    BashOperator(task_id="bash",
                 bash_command="echo {{ conn.my_db.host }} {{ conn.my_db.password }} {{ var.value.api_token }}",
                 env={"DB_HOST": "{{ conn.my_db.host }}", "API_TOKEN": "{{ var.value.api_token }}"})
    PythonOperator(task_id="python", python_callable=connect,
                   op_kwargs={"login_with": "{{ conn.my_db.password }}", "token": "{{ var.value.api_token }}",
                              "host": "{{ conn.my_db.host }}", "day": "{{ ds }}"})
'''


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("rendered")
    with pytest.MonkeyPatch.context() as mp, mock_aws():
        for name, value in {"AWS_REGION": REGION, "AWS_DEFAULT_REGION": REGION, "UPDRAFT_TABLE": TABLE,
                            "UPDRAFT_BUCKET": BUCKET, "UPDRAFT_WORKER_FUNCTION": "updraft-worker"}.items():
            mp.setenv(name, value)
        for name in ("UPDRAFT_LOCAL_COMPUTE", "UPDRAFT_SCHEDULER_FUNCTION", "AWS_ENDPOINT_URL",
                     "AIRFLOW__SECRETS__BACKEND"):
            mp.delenv(name, raising=False)
        mp.setattr(tempfile, "tempdir", str(tmp))
        kms = boto3.client("kms", region_name=REGION)
        key_id = kms.create_key()["KeyMetadata"]["KeyId"]
        mp.setenv("UPDRAFT_KMS_KEY", key_id)
        config = StoreConfig(table_name=TABLE, region=REGION, s3_bucket=BUCKET, kms_key_id=key_id)
        create_table(config)
        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket=BUCKET)
        s3.put_object(Bucket=BUCKET, Key="dags/rendered_dag.py", Body=DAG_FILE.encode())
        store = DynamoStore(config, s3_client=s3, kms_client=lambda: kms)
        (tmp / "parsed").mkdir()
        (tmp / "parsed" / "rendered_dag.py").write_text(DAG_FILE)
        store_dags(store, LocalDagLoader(tmp / "parsed").load_file("rendered_dag.py")["rendered_dag"],
                   now=dt.datetime.now(dt.UTC))
        store.set_variable("api_token", TOKEN)
        store.put_connection(ConnectionRecord(conn_id="my_db", conn_type="postgres", host="db.example.com",
                                              login="user", password=PASSWORD, port=5432))
        reset_masker()
        mp.setattr("updraft.services._shared", None)
        from functions.api import handler as api_handler
        from functions.worker import handler

        recording = RecordingExecutor()
        handler.services().executor = recording
        trigger_dag(store, "rendered_dag", now=dt.datetime.now(dt.UTC), run_id=RUN_ID)
        Scheduler(store, recording).schedule_run("rendered_dag", RUN_ID)
        dispatches = recording.take()
        for dispatch in dispatches:
            handler.handler(dispatch.to_payload(), lambda_context("updraft-worker"))
        recording.take()
        yield SimpleNamespace(store=store, api=Api(api_handler), dispatches=dispatches)
    variable.reset_backends()
    connection.reset_backends()
    forget_secrets_setup()
    reset_masker()


def _ti(world, task_id: str) -> dict:
    answer = world.api.get(f"/api/v2/dags/rendered_dag/dagRuns/{RUN_ID}/taskInstances/{task_id}")
    assert answer.status == 200, answer.body
    return answer.body


@pytest.mark.slow
def test_the_api_shows_each_tasks_rendered_fields_with_both_secrets_masked(world):
    bash = _ti(world, "bash")
    assert bash["state"] == "success"
    assert bash["rendered_fields"] == {
        "bash_command": "echo db.example.com *** ***",
        "env": {"API_TOKEN": "***", "DB_HOST": "db.example.com"},
        "cwd": None,
    }
    # A failed try shows what it ran: the fields are recorded before execute, as Airflow records them.
    python = _ti(world, "python")
    assert python["state"] == "failed"
    assert python["rendered_fields"]["op_kwargs"] == {"day": python["logical_date"][:10],
                                                      "host": "db.example.com", "login_with": "***",
                                                      "token": "***"}
    assert python["rendered_fields"]["op_args"] == []

    listed = world.api.get(f"/api/v2/dags/rendered_dag/dagRuns/{RUN_ID}/taskInstances").body["task_instances"]
    assert {ti["task_id"]: ti["rendered_fields"] for ti in listed} == {"bash": bash["rendered_fields"],
                                                                       "python": python["rendered_fields"]}
    stored = str(world.store.models.task_instance.scan())
    for ti in world.store.get_run_tis("rendered_dag", RUN_ID):
        stored += str(ti.rendered_fields)
    assert PASSWORD not in stored and TOKEN not in stored


def test_only_the_live_try_may_write_its_rendered_fields(world):
    dispatch = next(d for d in world.dispatches if d.key.task_id == "bash")
    key = TIKey("rendered_dag", RUN_ID, "bash")
    assert world.store.get_ti(key).state == TaskInstanceState.SUCCESS
    # The try has ended: a redelivered or stale worker's write is refused and the recorded fields stay.
    assert not world.store.set_rendered_fields(key, try_id=dispatch.try_id, rendered_fields={"bash_command": "x"})
    assert world.store.get_ti(key).rendered_fields["bash_command"] == "echo db.example.com *** ***"
