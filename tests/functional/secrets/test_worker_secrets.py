"""Variables and Connections through the worker handler on moto, from each source in Airflow's order (secrets
backend, environment, metastore), and every secret masked in the try's log and note.

One moto environment for the module (KMS key, table, bucket, Secrets Manager, SSM); each test triggers its own
run of the same DAG and runs its dispatches through ``functions.worker.handler``.
"""

from __future__ import annotations

import datetime as dt
import json
import tempfile
from types import SimpleNamespace

import boto3
import pytest
from moto import mock_aws

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

TABLE = "updraft-secrets-test"
BUCKET = "updraft-secrets-bucket"
REGION = "us-east-1"
PASSWORD = "p@ss w0rd!"  # URL-encoded in a URI: p%40ss%20w0rd%21
API_KEY = "tok-0123456789"
SM_BACKEND = "airflow.providers.amazon.aws.secrets.secrets_manager.SecretsManagerBackend"
SSM_BACKEND = "airflow.providers.amazon.aws.secrets.systems_manager.SystemsManagerParameterStoreBackend"

DAG_FILE = '''
import datetime, logging, sys
from airflow.sdk import DAG, BaseHook, Variable, task
from airflow.providers.standard.operators.bash import BashOperator

with DAG("secrets_dag", schedule=None, start_date=datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)):
    @task
    def use():
        conn = BaseHook.get_connection("db")
        key = Variable.get("api_key")
        settings = Variable.get("settings", deserialize_json=True)
        Variable.set("written", "by the task")
        print("stdout password", conn.password, "uri", conn.get_uri())
        print("stderr key", key, file=sys.stderr)
        logging.getLogger("airflow.task").info("logged %s and %s", conn.password, key)
        return {"source": Variable.get("source"), "settings": settings, "host": conn.host,
                "written": Variable.get("written"), "password": conn.password}

    @task
    def fail():
        raise ValueError("cannot log in with " + BaseHook.get_connection("db").password)

    use()
    fail()
    BashOperator(task_id="templated", bash_command="echo {{ var.value.api_key }} {{ conn.db.password }} "
                                                   "{{ conn.db.host }} {{ var.json.settings.region }}")
'''


def _conn_json(host: str) -> str:
    return json.dumps({"conn_type": "postgres", "host": host, "login": "user", "password": PASSWORD, "port": 5432})


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("secrets")
    with pytest.MonkeyPatch.context() as mp, mock_aws():
        for name, value in {"AWS_REGION": REGION, "AWS_DEFAULT_REGION": REGION, "UPDRAFT_TABLE": TABLE,
                            "UPDRAFT_BUCKET": BUCKET, "UPDRAFT_WORKER_FUNCTION": "updraft-worker"}.items():
            mp.setenv(name, value)
        mp.setattr(tempfile, "tempdir", str(tmp))
        key_id = boto3.client("kms", region_name=REGION).create_key()["KeyMetadata"]["KeyId"]
        mp.setenv("UPDRAFT_KMS_KEY", key_id)
        config = StoreConfig(table_name=TABLE, region=REGION, s3_bucket=BUCKET, kms_key_id=key_id)
        create_table(config)
        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket=BUCKET)
        s3.put_object(Bucket=BUCKET, Key="dags/secrets_dag.py", Body=DAG_FILE.encode())
        kms = boto3.client("kms", region_name=REGION)
        store = DynamoStore(config, s3_client=s3, kms_client=lambda: kms)
        local = tmp / "parsed"
        local.mkdir()
        (local / "secrets_dag.py").write_text(DAG_FILE)
        store_dags(store, LocalDagLoader(local).load_file("secrets_dag.py")["secrets_dag"],
                   now=dt.datetime.now(dt.UTC))
        from functions.worker import handler

        mp.setattr("updraft.services._shared", None)
        recording = RecordingExecutor()
        handler.services().executor = recording
        yield SimpleNamespace(handler=handler, store=store, s3=s3, mp=mp, recording=recording,
                              sm=boto3.client("secretsmanager", region_name=REGION),
                              ssm=boto3.client("ssm", region_name=REGION), runs=iter(range(1000)))
    variable.reset_backends()
    connection.reset_backends()
    forget_secrets_setup()
    reset_masker()


def run_dag(world) -> tuple[str, dict[str, str]]:
    """Trigger a run, run every task through the worker handler; the run id and each task's log."""
    run_id = f"manual__{next(world.runs)}"
    now = dt.datetime.now(dt.UTC)
    trigger_dag(world.store, "secrets_dag", now=now, run_id=run_id)
    Scheduler(world.store, world.recording).schedule_run("secrets_dag", run_id)
    logs = {}
    for dispatch in world.recording.take():
        world.handler.handler(dispatch.to_payload(), lambda_context("updraft-worker"))
        key = f"logs/secrets_dag/{run_id}/{dispatch.key.task_id}/-1/1.log"
        logs[dispatch.key.task_id] = world.s3.get_object(Bucket=BUCKET, Key=key)["Body"].read().decode()
    world.recording.take()  # nothing downstream
    return run_id, logs


def _clear(world) -> None:
    for name in ("AIRFLOW__SECRETS__BACKEND", "AIRFLOW__SECRETS__BACKEND_KWARGS", "AIRFLOW_VAR_API_KEY",
                 "AIRFLOW_VAR_SETTINGS", "AIRFLOW_VAR_SOURCE", "AIRFLOW_CONN_DB"):
        world.mp.delenv(name, raising=False)
    for key in ("api_key", "settings", "source", "written"):
        world.store.delete_variable(key)
    world.store.delete_connection("db")
    for name in world.sm.list_secrets()["SecretList"]:
        world.sm.delete_secret(SecretId=name["Name"], ForceDeleteWithoutRecovery=True)
    params = world.ssm.describe_parameters().get("Parameters", [])
    if params:
        world.ssm.delete_parameters(Names=[p["Name"] for p in params])
    reset_masker()


def _provide(world, source: str, host: str) -> None:
    values = {"api_key": API_KEY, "settings": json.dumps({"region": "eu-west-1"}), "source": source}
    if source == "metastore":
        for key, value in values.items():
            world.store.set_variable(key, value)
        world.store.put_connection(ConnectionRecord(conn_id="db", conn_type="postgres", host=host, login="user",
                                                    password=PASSWORD, port=5432))
    elif source == "env":
        for key, value in values.items():
            world.mp.setenv(f"AIRFLOW_VAR_{key.upper()}", value)
        world.mp.setenv("AIRFLOW_CONN_DB", _conn_json(host))
    elif source == "secretsmanager":
        world.mp.setenv("AIRFLOW__SECRETS__BACKEND", SM_BACKEND)
        world.mp.setenv("AIRFLOW__SECRETS__BACKEND_KWARGS", json.dumps({"variables_prefix": "af/vars"}))
        for key, value in values.items():
            world.sm.create_secret(Name=f"af/vars/{key}", SecretString=value)
        # The provider's field words: "user"/"pass" stand for login/password.
        world.sm.create_secret(Name="airflow/connections/db", SecretString=json.dumps(
            {"conn_type": "postgres", "host": host, "user": "user", "pass": PASSWORD, "port": 5432}))
    else:
        world.mp.setenv("AIRFLOW__SECRETS__BACKEND", SSM_BACKEND)
        world.mp.setenv("AIRFLOW__SECRETS__BACKEND_KWARGS", "{}")
        for key, value in values.items():
            world.ssm.put_parameter(Name=f"/airflow/variables/{key}", Value=value, Type="SecureString")
        world.ssm.put_parameter(Name="/airflow/connections/db", Type="SecureString",
                                Value=f"postgres://user:{PASSWORD.replace('@', '%40').replace(' ', '%20')}"
                                      f"@{host}:5432/")


@pytest.mark.slow
@pytest.mark.parametrize("source", ["metastore", "env", "secretsmanager", "ssm"])
def test_each_source_serves_the_dag_and_every_secret_is_masked(world, source):
    _clear(world)
    _provide(world, source, host=f"{source}.example.com")
    run_id, logs = run_dag(world)

    key = TIKey("secrets_dag", run_id, "use")
    assert world.store.get_ti(key).state == TaskInstanceState.SUCCESS, logs["use"]
    result = world.store.get_xcom(key, "return_value")
    assert result == {"source": source, "settings": {"region": "eu-west-1"}, "host": f"{source}.example.com",
                      "written": "by the task", "password": PASSWORD}
    # The API shows the returned value as the try's log does: the password masked (downstream reads it whole).
    shown = world.store.shown_xcoms("secrets_dag", run_id, "use")[(-1, "return_value")]
    assert shown == {**result, "password": "***"}
    # Variable.set wrote to the metastore, encrypted: the table holds no clear text of it.
    assert world.store.get_variable("written").value == "by the task"
    raw = world.store.models.variable.get("VARIABLE#written", "META")
    assert raw.encrypted and b"by the task" not in bytes(raw.value)

    templated = TIKey("secrets_dag", run_id, "templated")
    assert world.store.get_ti(templated).state == TaskInstanceState.SUCCESS, logs["templated"]
    assert f"*** *** {source}.example.com eu-west-1" in logs["templated"]

    failed = world.store.get_ti(TIKey("secrets_dag", run_id, "fail"))
    assert failed.state == TaskInstanceState.FAILED
    assert failed.note == "ValueError: cannot log in with ***"
    assert "ValueError: cannot log in with ***" in logs["fail"]

    assert "stdout password *** uri postgres://user:***@" in logs["use"]
    assert "stderr key ***" in logs["use"] and "logged *** and ***" in logs["use"]
    assert "Returned value was" in logs["use"]
    for text in logs.values():
        for secret in (PASSWORD, "p%40ss%20w0rd%21", "p%40ss+w0rd%21", API_KEY):
            assert secret not in text


@pytest.mark.slow
def test_precedence_is_backend_then_environment_then_metastore(world):
    _clear(world)
    _provide(world, "metastore", host="metastore.example.com")
    world.mp.setenv("AIRFLOW_VAR_SOURCE", "env")
    world.mp.setenv("AIRFLOW__SECRETS__BACKEND", SSM_BACKEND)
    world.ssm.put_parameter(Name="/airflow/variables/source", Value="ssm", Type="String")
    world.ssm.put_parameter(Name="/airflow/connections/db", Value=_conn_json("ssm.example.com"), Type="String")
    run_id, _ = run_dag(world)
    assert world.store.get_xcom(TIKey("secrets_dag", run_id, "use"), "return_value")["source"] == "ssm"

    world.ssm.delete_parameter(Name="/airflow/variables/source")
    run_id, _ = run_dag(world)
    result = world.store.get_xcom(TIKey("secrets_dag", run_id, "use"), "return_value")
    assert (result["source"], result["host"]) == ("env", "ssm.example.com")


def test_a_misconfigured_backend_or_a_missing_connection_is_a_task_error_naming_it(world):
    _clear(world)
    world.mp.setenv("AIRFLOW__SECRETS__BACKEND", SM_BACKEND)
    world.mp.setenv("AIRFLOW__SECRETS__BACKEND_KWARGS", json.dumps({"full_url_mode": False}))
    run_id, _ = run_dag(world)
    note = world.store.get_ti(TIKey("secrets_dag", run_id, "use")).note
    assert "full_url_mode" in note and "not supported by Updraft" in note

    world.mp.setenv("AIRFLOW__SECRETS__BACKEND_KWARGS", "{}")
    run_id, _ = run_dag(world)
    assert "The conn_id `db` isn't defined" in world.store.get_ti(TIKey("secrets_dag", run_id, "use")).note
