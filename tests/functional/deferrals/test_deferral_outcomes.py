"""How deferrals end, as Airflow ends them: a deferral timeout fails the try (a sensor without retry, skipped
with soft_fail; an operator retries), ``end_from_trigger`` ends the task with no worker, ``start_from_trigger``
defers before ``execute``, a trigger Updraft cannot wait for fails clearly, and a lost wait is resumed by the
scheduler's backstop. One world for the module (a DAG per case), on a fake clock."""

from __future__ import annotations

import datetime as dt

import pytest
from moto import mock_aws

from tests.functional.deferrals.defer_harness import DeferralEnv
from tests.functional.runtime.rt_harness import HEADER
from updraft.api.deferrals import trigger_response
from updraft.model.states import TaskInstanceState as TI

CASES = """
from airflow.exceptions import TaskDeferred
from airflow.providers.standard.sensors.date_time import DateTimeSensorAsync
from airflow.providers.standard.sensors.time_delta import TimeDeltaSensor
from airflow.providers.standard.triggers.temporal import DateTimeTrigger
from airflow.sdk import BaseOperator
from airflow.triggers.base import BaseTrigger, TriggerEvent

IN_AN_HOUR = "{{ (logical_date + macros.timedelta(hours=1)).isoformat() }}"

class Impatient(BaseOperator):
    def execute(self, context):
        raise TaskDeferred(trigger=DateTimeTrigger(moment=context["logical_date"] + datetime.timedelta(hours=1)),
                           method_name="done", timeout=datetime.timedelta(minutes=10))

    def done(self, context, event=None):
        return "never"

class Polling(BaseTrigger):
    end_from_trigger = True  # a polling trigger that would end the task itself: Updraft does not

    def serialize(self):
        return ("cases.Polling", {})

    async def run(self):
        yield TriggerEvent(True)

class PollingOperator(BaseOperator):
    def execute(self, context):
        self.defer(trigger=Polling(), method_name="done")

@task
def ends_from_its_trigger(logical_date=None):
    raise TaskDeferred(trigger=DateTimeTrigger(moment=logical_date + datetime.timedelta(hours=1),
                                               end_from_trigger=True), method_name=None)

with DAG("timeouts", schedule=None, start_date=START):
    TimeDeltaSensor(task_id="sensor", delta=datetime.timedelta(days=3650), deferrable=True, timeout=3600,
                    retries=2)
    TimeDeltaSensor(task_id="soft", delta=datetime.timedelta(days=3650), deferrable=True, timeout=3600,
                    soft_fail=True)
    Impatient(task_id="operator", retries=1, retry_delay=datetime.timedelta(seconds=0))

with DAG("ends", schedule=None, start_date=START):
    DateTimeSensorAsync(task_id="sensor", target_time=IN_AN_HOUR, end_from_trigger=True)
    DateTimeSensorAsync(task_id="started", target_time=IN_AN_HOUR, start_from_trigger=True)
    ends_from_its_trigger()

with DAG("refused", schedule=None, start_date=START):
    PollingOperator(task_id="polls", retries=3)

with DAG("lost", schedule=None, start_date=START):
    DateTimeSensorAsync(task_id="sensor", target_time=IN_AN_HOUR)

with DAG("too_slow", schedule=None, start_date=START, dagrun_timeout=datetime.timedelta(minutes=30)):
    DateTimeSensorAsync(task_id="sensor", target_time=IN_AN_HOUR)
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    with mock_aws():
        env = DeferralEnv(tmp_path_factory.mktemp("deferral_outcomes"), parallelism=4)
        folder = tmp_path_factory.mktemp("case_dags")
        (folder / "cases.py").write_text(HEADER + CASES)
        env.add_folder(folder)
        yield env


def _states(env, dag_id, run):
    return {label: (state, env.ti(dag_id, run.run_id, label).try_number)
            for label, state in env.states(dag_id, run.run_id).items()}


def test_a_deferral_timeout_fails_a_sensor_skips_a_soft_one_and_retries_an_operator(env):
    run = env.trigger("timeouts", logical_date=env.clock())
    env.step()
    assert _states(env, "timeouts", run) == {"sensor": ("deferred", 1), "soft": ("deferred", 1),
                                             "operator": ("deferred", 1)}
    assert env.ti("timeouts", run.run_id, "sensor").trigger["times_out"] is True
    env.advance(minutes=10)  # the operator's 10-minute timeout: Airflow's TaskDeferralTimeout, then its retry
    assert _states(env, "timeouts", run)["operator"] == ("deferred", 2)
    assert "TaskDeferralTimeout: Trigger timeout" in env.log("timeouts", run.run_id, "operator", try_number=1)
    env.advance(minutes=10)
    assert _states(env, "timeouts", run)["operator"] == ("failed", 2)
    env.advance(minutes=40)  # the sensors' timeout (3600 s): AirflowSensorTimeout fails without a retry
    assert _states(env, "timeouts", run) == {"sensor": ("failed", 1), "soft": ("skipped", 1),
                                             "operator": ("failed", 2)}
    assert "AirflowSensorTimeout" in env.log("timeouts", run.run_id, "sensor")


def test_end_from_trigger_ends_the_task_without_a_worker_and_start_from_trigger_skips_execute(env):
    run = env.trigger("ends", logical_date=env.clock())
    env.step()
    assert set(env.states("ends", run.run_id).values()) == {"deferred"}
    started = env.ti("ends", run.run_id, "started")
    assert started.trigger["classpath"] == "airflow.providers.standard.triggers.temporal.DateTimeTrigger"
    assert started.trigger["kwargs"]["target_time"] == (run.logical_date + dt.timedelta(hours=1)).isoformat()
    response = trigger_response(started)  # what the REST API shows of a deferred instance
    assert response["classpath"] == started.trigger["classpath"] and response["triggerer_id"] is None
    dispatched_before = env.dispatched
    env.advance(hours=1)
    assert env.states("ends", run.run_id) == {"sensor": "success", "started": "success",
                                              "ends_from_its_trigger": "success"}
    assert env.dispatched - dispatched_before == 1  # only start_from_trigger's resume ran on a worker
    assert env.store.get_run("ends", run.run_id).state.value == "success"


def test_a_trigger_updraft_cannot_wait_for_fails_the_try_naming_it(env):
    run = env.trigger("refused", logical_date=env.clock())
    env.step()
    ti = env.ti("refused", run.run_id, "polls")
    assert (ti.state, ti.try_number) == (TI.FAILED, 1)  # no retry: it can never work
    assert "cases.Polling" in ti.note and "end_from_trigger" in ti.note


def test_a_wait_whose_resume_never_comes_is_resumed_by_the_scheduler(env):
    waits, env.waits = env.waits, None  # no wait engine: the try defers, nothing will resume it
    try:
        run = env.trigger("lost", logical_date=env.clock())
        env.step()
    finally:
        env.waits = waits
    assert env.states("lost", run.run_id) == {"sensor": "deferred"}
    env.advance(hours=1)
    assert env.states("lost", run.run_id) == {"sensor": "deferred"}
    env.advance(minutes=5)  # RESUME_GRACE past its end: the scheduler resumes it
    assert env.states("lost", run.run_id) == {"sensor": "success"}
    assert env.ti("lost", run.run_id, "sensor").try_number == 1


def test_a_dagrun_timeout_ends_the_deferred_try_and_stops_its_wait(env):
    run = env.trigger("too_slow", logical_date=env.clock())
    env.step()
    deferred = env.ti("too_slow", run.run_id, "sensor")
    assert env.status_of(deferred) == "RUNNING"
    env.advance(minutes=31)
    assert env.states("too_slow", run.run_id) == {"sensor": "skipped"}
    assert env.store.get_run("too_slow", run.run_id).state.value == "failed"
    assert env.status_of(deferred) == "ABORTED"
