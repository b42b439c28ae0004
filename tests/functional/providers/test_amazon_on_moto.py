"""The real amazon provider (tests/providers/requirements.txt), unchanged, through `updraft dags test --requirements`
on the embedded AWS, with the states and try numbers Airflow gives (issue 31).

`updraft dags test` runs as a process of its own: the providers it installs for DAG code must not become
importable in this test process (the other tests of the worker run without them). One run of one DAG of many
tasks (amazon_dags/amazon_on_moto.py), its JSON table and logs read by each test.

What moto does not allow: it runs a Lambda function's code only in Docker, absent here. Creating the function
works; invoking it answers 200 with ``FunctionError`` and "error running docker" as its payload, so
``LambdaInvokeFunctionOperator`` fails each try as it would on AWS for a function that errs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.provider_packages import REQUIREMENTS, installed_providers

pytestmark = pytest.mark.slow

HERE = Path(__file__).parent
UPDRAFT = [sys.executable, "-c", "from updraft.cli import main; main()"]
OK = ("success", 1)


@pytest.fixture(scope="module")
def amazon_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    installed_providers()  # a clear failure naming `make install` when the providers are not in the cache
    logs = tmp_path_factory.mktemp("amazon_logs")
    env = {**os.environ, "PIP_NO_INDEX": "1"}
    env.pop("AWS_ENDPOINT_URL", None)
    done = subprocess.run([*UPDRAFT, "dags", "test", "amazon_on_moto", "2024-03-05", "--dags-folder",
                           str(HERE / "amazon_dags"), "--requirements", str(REQUIREMENTS), "--log-folder", str(logs),
                           "-o", "json"], check=False, env=env, capture_output=True, text=True, timeout=300)
    assert done.stdout, done.stderr
    run_dir = logs / "amazon_on_moto" / "manual__2024-03-05T00:00:00+00:00"
    return {"result": json.loads(done.stdout), "code": done.returncode, "stderr": done.stderr,
            "log": lambda task, attempt=1: (run_dir / task / "-1" / f"{attempt}.log").read_text()}


def test_every_operator_ends_with_airflows_state_and_try_number(amazon_run: dict[str, Any]) -> None:
    table = {label: (ti["state"], ti["try_number"]) for label, ti in amazon_run["result"]["tasks"].items()}
    assert table == {
        "create_bucket": OK, "create_object": OK, "list_keys": OK, "copy_object": OK, "key_poke": OK,
        "write_marker_later": OK, "key_reschedule": OK, "key_deferrable": OK, "delete_copies": OK,
        "create_queues": OK, "sqs_publish": OK, "sqs_sensor": OK, "sns_publish": OK, "dynamodb_write": OK,
        "lambda_role": OK, "lambda_create": OK,
        "lambda_invoke": ("failed", 2),  # retries=1: both tries fail (moto runs Lambda code only in Docker)
        "effects": OK,  # trigger_rule all_done: the only leaf, so the run succeeds as Airflow's would
    }
    assert amazon_run["result"]["run_state"] == "success" and amazon_run["code"] == 0


def test_the_embedded_aws_holds_what_the_operators_wrote(amazon_run: dict[str, Any]) -> None:
    line = next(line for line in amazon_run["log"]("effects").splitlines() if line.startswith("EFFECTS "))
    effects = json.loads(line.removeprefix("EFFECTS "))
    # S3CreateObjectOperator's templated key and data, rendered for the run.
    assert effects["object"] == "manual__2024-03-05T00:00:00+00:00 of amazon_on_moto at 20240305"
    # The copy was deleted by S3DeleteObjectsOperator; the object and the sensors' marker remain.
    assert effects["keys"] == ["late/marker", "reports/2024-03-05/run.txt"]
    assert effects["notes"] == ["alert for 2024-03-05"]  # SnsPublishOperator -> the topic -> its SQS subscriber
    assert effects["items"] == [["a", 1], ["b", 2]]  # DynamoDBHook.write_batch_data
    assert effects["listed"] == ["reports/2024-03-05/run.txt"]  # S3ListOperator's XCom
    assert effects["received"] == ["hello 2024-03-05"]  # SqsSensor's XCom: what SqsPublishOperator sent


def test_sensor_modes_waited_as_airflows(amazon_run: dict[str, Any]) -> None:
    assert "UP_FOR_RESCHEDULE" in amazon_run["log"]("key_reschedule")  # looked, gave its slot back, looked again
    deferrable = amazon_run["log"]("key_deferrable")
    # Deferred to the real provider's trigger, looked at by Updraft's own S3 look, resumed in the same try.
    assert "trigger airflow.providers.amazon.aws.triggers.s3.S3KeyTrigger resumes it" in deferrable
    assert deferrable.count("end of try 1") == 2  # the deferral, then the resume


def test_no_aws_default_connection_means_the_default_chain(amazon_run: dict[str, Any]) -> None:
    log = amazon_run["log"]("create_bucket")
    assert "Unable to find AWS Connection ID 'aws_default', switching to empty." in log  # Airflow's own warning
    assert "Created bucket with name: updraft-provider-e2e" in log


def test_lambda_invoke_fails_because_moto_runs_lambda_code_only_in_docker(amazon_run: dict[str, Any]) -> None:
    for attempt in (1, 2):
        log = amazon_run["log"]("lambda_invoke", attempt)
        assert "Lambda function execution resulted in error" in log and "error running docker" in log
