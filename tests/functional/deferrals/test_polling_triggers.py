"""Polling triggers on the deferral state machine's own ASL (local engine, fake clock): the check function looks at
the trigger once per interval and the try resumes with its event; a deferral timeout fails the try. One world
for the module (a DAG per case)."""

from __future__ import annotations

import json

import pytest
from moto import mock_aws

from tests.functional.deferrals import poll_triggers
from tests.functional.deferrals.defer_harness import DeferralEnv
from tests.functional.runtime.rt_harness import HEADER
from updraft.model.states import TaskInstanceState as TI

CASES = """
from airflow.providers.standard.sensors.external_task import ExternalTaskSensor
from airflow.providers.standard.sensors.filesystem import FileSensor
from airflow.sdk import BaseOperator
from tests.functional.deferrals.poll_triggers import BrokenTrigger, FlagTrigger

class WaitsForFlag(BaseOperator):
    template_fields = ("flag",)

    def __init__(self, flag, **kwargs):
        super().__init__(**kwargs)
        self.flag = flag

    def execute(self, context):
        self.defer(trigger=FlagTrigger(self.flag), method_name="done", timeout=datetime.timedelta(minutes=10))

    def done(self, context, event=None):
        return event

with DAG("upstream", schedule=None, start_date=START):
    EmptyOperator(task_id="produce")

with DAG("downstream", schedule=None, start_date=START):
    ExternalTaskSensor(task_id="waits", external_dag_id="upstream", external_task_id="produce", deferrable=True,
                       poke_interval=30, timeout=3600)

with DAG("file_wait", schedule=None, start_date=START):
    FileSensor(task_id="wait", filepath="{{ dag_run.conf['name'] }}", deferrable=True, poke_interval=60,
               timeout=3600)

class WaitsForBroken(BaseOperator):
    def execute(self, context):
        self.defer(trigger=BrokenTrigger(), method_name="done", timeout=datetime.timedelta(minutes=10))

    def done(self, context, event=None):
        return event

with DAG("broken", schedule=None, start_date=START):
    WaitsForBroken(task_id="waits", retries=1, retry_delay=datetime.timedelta(seconds=30))

with DAG("flag", schedule=None, start_date=START):
    WaitsForFlag(task_id="waits", flag="{{ dag_run.conf['flag'] }}")
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    files = tmp_path_factory.mktemp("watched")
    with pytest.MonkeyPatch.context() as patch, mock_aws():
        patch.setenv("AIRFLOW_CONN_FS_DEFAULT", json.dumps({"conn_type": "fs", "extra": {"path": str(files)}}))
        env = DeferralEnv(tmp_path_factory.mktemp("polling"), parallelism=4)
        env.files = files
        folder = tmp_path_factory.mktemp("poll_dags")
        (folder / "poll_cases.py").write_text(HEADER + CASES)
        env.add_folder(folder)
        yield env


def test_deferrable_external_task_sensor_resumes_when_the_other_dags_task_succeeds(env):
    when = env.clock()
    run = env.trigger("downstream", logical_date=when)
    env.step()
    waits = env.ti("downstream", run.run_id, "waits")
    assert waits.state == TI.DEFERRED and waits.trigger["kind"] == "poll"
    checks = env.checks
    env.advance(seconds=30)
    assert env.checks == checks + 1 and env.ti("downstream", run.run_id, "waits").state == TI.DEFERRED
    upstream = env.trigger("upstream", logical_date=when)
    env.step()
    assert env.states("upstream", upstream.run_id) == {"produce": "success"}
    env.advance(seconds=30)
    assert env.states("downstream", run.run_id) == {"waits": "success"}
    assert env.ti("downstream", run.run_id, "waits").try_number == 1  # a deferral and its resume: one try


def test_deferrable_file_sensor_resumes_when_the_file_appears(env):
    run = env.trigger("file_wait", conf={"name": "data.csv"})
    env.step()
    assert env.states("file_wait", run.run_id) == {"wait": "deferred"}
    env.advance(seconds=60)
    assert env.states("file_wait", run.run_id) == {"wait": "deferred"}
    (env.files / "data.csv").write_text("a,b\n")
    env.advance(seconds=59)
    assert env.states("file_wait", run.run_id) == {"wait": "deferred"}  # the next look is a minute after the last
    env.advance(seconds=1)
    assert env.states("file_wait", run.run_id) == {"wait": "success"}


def test_a_users_async_trigger_fires_with_its_event(env):
    run = env.trigger("flag", conf={"flag": "go"})
    env.step()
    assert env.states("flag", run.run_id) == {"waits": "deferred"}
    poll_triggers.READY.add("go")
    env.advance(seconds=20)
    assert env.states("flag", run.run_id) == {"waits": "success"}
    assert env.xcom("flag", run.run_id, "waits") == {"flag": "go"}


def test_a_polling_triggers_timeout_fails_the_try(env):
    run = env.trigger("flag", conf={"flag": "never"})
    env.step()
    ti = env.ti("flag", run.run_id, "waits")
    assert ti.state == TI.DEFERRED
    env.advance(minutes=9, seconds=59)
    assert env.states("flag", run.run_id) == {"waits": "deferred"}
    env.advance(seconds=1)
    ti = env.ti("flag", run.run_id, "waits")
    assert ti.state == TI.FAILED and env.status_of(ti) in (None, "SUCCEEDED")



def test_a_trigger_that_raises_fails_its_try_at_once_and_the_task_retries_as_airflows_would(env):
    """Airflow's triggerer fails the try of a trigger that raised (``__fail__`` with "Trigger failure"), with the
    task's retries: no wait for the deferral's timeout or a sweep."""
    run = env.trigger("broken")
    env.step()  # the try defers, and the wait's first look raises: the try resumes only to fail
    ti = env.ti("broken", run.run_id, "waits")
    assert (ti.state, ti.try_number) == (TI.UP_FOR_RETRY, 1)
    env.advance(seconds=31)  # the retry defers and fails the same way: no retries left
    env.advance(seconds=1)
    ti = env.ti("broken", run.run_id, "waits")
    assert (ti.state, ti.try_number) == (TI.FAILED, 2)
