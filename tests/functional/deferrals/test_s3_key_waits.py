"""The Amazon provider's S3 key wait (``S3KeySensor``/``S3KeyTrigger``) in its three modes, on moto and the deferral
state machine's own ASL (local engine, fake clock): poke and reschedule look from the worker, deferrable waits are
looked at by the check function with the DAG-code role's credentials, never its own. One world for the module."""

from __future__ import annotations

import sys

import boto3
import pytest
from moto import mock_aws

from tests.functional.deferrals.defer_harness import DeferralEnv
from tests.functional.runtime.rt_harness import HEADER
from updraft.model.deferrals import execution_name
from updraft.model.states import TaskInstanceState as TI
from updraft.runtime.dag_code_credentials import DagCodeCredentials
from updraft.sdk.exceptions import UnsupportedFeatureError

CASES = """
from airflow.providers.amazon.aws.sensors.s3 import S3KeySensor

def big_enough(files, **context):
    return all(f["Size"] > 3 for f in files) and context["ti"].task_id == "checked"

with DAG("s3_poke", schedule=None, start_date=START):
    S3KeySensor(task_id="checked", bucket_key="s3://data/poke/{{ dag_run.conf['key'] }}", check_fn=big_enough,
                poke_interval=0, timeout=0)

with DAG("s3_reschedule", schedule=None, start_date=START):
    S3KeySensor(task_id="wait", bucket_name="data", bucket_key="resched/*.csv", wildcard_match=True,
                mode="reschedule", poke_interval=60, timeout=3600)

with DAG("s3_defer", schedule=None, start_date=START):
    S3KeySensor(task_id="wait", bucket_name="data", bucket_key=["defer/a", "defer/b"], deferrable=True,
                poke_interval=30, timeout=3600)
    S3KeySensor(task_id="regex", bucket_name="data", bucket_key=r"regex/part-\\d+$", use_regex=True,
                deferrable=True, poke_interval=30, timeout=3600)

with DAG("s3_backoff", schedule=None, start_date=START):
    S3KeySensor(task_id="wait", bucket_key="s3://data/never", deferrable=True, poke_interval=10, timeout=100,
                exponential_backoff=True, max_wait=40, soft_fail=True)
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    before = {m for m in sys.modules if m.startswith("airflow.providers.amazon")}
    with mock_aws():
        env = DeferralEnv(tmp_path_factory.mktemp("s3"), parallelism=4)
        env.in_process = True  # poke mode's boto3 calls reach this process's moto
        iam = boto3.client("iam", region_name="us-east-1")
        trust = '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, ' \
                '"Action": ["sts:AssumeRole", "sts:TagSession"]}]}'
        role = iam.create_role(RoleName="dag-code", AssumeRolePolicyDocument=trust)["Role"]["Arn"]
        env.credentials = DagCodeCredentials(lambda: boto3.client("sts", region_name="us-east-1"), role)
        env.s3 = boto3.client("s3", region_name="us-east-1")
        env.s3.create_bucket(Bucket="data")
        folder = tmp_path_factory.mktemp("s3_dags")
        (folder / "s3_cases.py").write_text(HEADER + CASES)
        env.add_folder(folder)
        yield env
    for name in {m for m in sys.modules if m.startswith("airflow.providers.amazon")} - before:
        del sys.modules[name]  # other files' import-surface tests expect the provider unimported


def test_poke_mode_honours_check_fn_with_the_files_metadata_and_the_context(env):
    env.s3.put_object(Bucket="data", Key="poke/small", Body=b"ab")
    env.s3.put_object(Bucket="data", Key="poke/large", Body=b"abcdef")
    small = env.trigger("s3_poke", conf={"key": "small"}, run_id="small")
    large = env.trigger("s3_poke", conf={"key": "large"}, run_id="large")
    env.step()
    assert env.states("s3_poke", large.run_id) == {"checked": "success"}
    assert env.states("s3_poke", small.run_id) == {"checked": "failed"}  # check_fn said no until the timeout
    assert "Sensor has timed out" in (env.ti("s3_poke", small.run_id, "checked").note or "")


def test_reschedule_mode_frees_the_worker_and_finds_a_wildcard_match(env):
    run = env.trigger("s3_reschedule")
    env.step()
    assert env.states("s3_reschedule", run.run_id) == {"wait": "up_for_reschedule"}
    env.s3.put_object(Bucket="data", Key="resched/day.csv", Body=b"x")
    # No scheduler tick: the next poke comes from its wake (a Wait to the reschedule date, then the scheduler for
    # the run), a little after 60 s as the try's clock moved on while it ran.
    env.clock.advance(seconds=60)
    env.drain()
    assert env.states("s3_reschedule", run.run_id) == {"wait": "up_for_reschedule"} and env.wakes == 0
    env.clock.advance(seconds=1)
    env.drain()
    ti = env.ti("s3_reschedule", run.run_id, "wait")
    assert ti.state == TI.SUCCESS and ti.try_number == 1 and env.wakes == 1


def test_deferrable_waits_for_every_key_polled_with_the_dag_code_role(env):
    run = env.trigger("s3_defer")
    env.step()
    wait = env.ti("s3_defer", run.run_id, "wait")
    assert wait.state == TI.DEFERRED and wait.trigger["classpath"].endswith("aws.triggers.s3.S3KeyTrigger")
    assert wait.trigger["kind"] == "poll"
    env.s3.put_object(Bucket="data", Key="defer/a", Body=b"x")
    env.advance(seconds=30)
    assert env.ti("s3_defer", run.run_id, "wait").state == TI.DEFERRED  # b is still missing
    assert env.credentials.assumed == 1  # the check looked with the role's credentials
    env.s3.put_object(Bucket="data", Key="defer/b", Body=b"x")
    env.advance(seconds=30)
    assert env.ti("s3_defer", run.run_id, "wait").state == TI.SUCCESS
    env.s3.put_object(Bucket="data", Key="regex/part-7", Body=b"x")
    env.advance(seconds=30)
    assert env.states("s3_defer", run.run_id)["regex"] == "success"


def test_without_a_dag_code_role_the_check_never_looks_with_its_own_credentials(env):
    env.credentials, role = None, env.credentials
    try:
        env.s3.delete_object(Bucket="data", Key="defer/b")
        run = env.trigger("s3_defer", run_id="no_role")
        env.step()
        env.advance(seconds=30)  # the process has AWS credentials (moto's): the check must not use them
        ti = env.ti("s3_defer", run.run_id, "wait")
        assert ti.state == TI.FAILED and "UPDRAFT_DAG_CODE_ROLE" in (env.log("s3_defer", run.run_id, "wait") or "")
    finally:
        env.credentials = role


@pytest.mark.parametrize(("kwargs", "named"), [
    ({"aws_conn_id": "my_aws"}, "aws_conn_id='my_aws'"),
    ({"deferrable": True, "check_fn": len}, "deferrable=True, check_fn"),
    ({"start_from_trigger": True}, "start_from_trigger"),
])
def test_arguments_updraft_does_not_honour_are_import_errors_naming_them(env, kwargs, named):
    from airflow.providers.amazon.aws.sensors.s3 import S3KeySensor

    with pytest.raises(UnsupportedFeatureError, match=named):
        S3KeySensor(task_id="s", bucket_key="s3://b/k", **kwargs)


def test_exponential_backoff_spaces_the_looks_out_up_to_max_wait_and_a_timeout_with_soft_fail_skips(env):
    run = env.trigger("s3_backoff")
    env.step()
    ti = env.ti("s3_backoff", run.run_id, "wait")
    execution = env.engine.executions[execution_name(ti.key, ti.try_number, str(ti.try_id))]
    waits = [execution.input["poll_seconds"]]
    for _ in range(3):
        checks = env.checks
        env.advance(seconds=waits[-1] - 1)
        assert env.checks == checks  # no look before the wait is over
        env.advance(seconds=1)
        assert env.checks == checks + 1
        waits.append(execution.input["poll_seconds"])
    assert waits == [10, 20, 40, 30]  # the last look comes at the timeout (100 s), not a max_wait past it
    env.advance(seconds=30)
    assert env.states("s3_backoff", run.run_id) == {"wait": "skipped"}
