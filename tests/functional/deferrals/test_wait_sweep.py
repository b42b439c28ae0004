"""The deferral sweep in the scheduler's pass (every ``wait_sweep_interval``): an execution whose try is gone is
stopped, and for a polling trigger a lost start is started, a failed execution fails its try as Airflow's trigger
failure, and a lost resume is resumed, so nothing waits forever (the deferral ASL on the local engine, on a fake
clock)."""

from __future__ import annotations

import pytest
from moto import mock_aws

from tests.functional.deferrals import poll_triggers
from tests.functional.deferrals.defer_harness import DeferralEnv
from updraft.model.deferrals import execution_name
from updraft.model.states import TaskInstanceState as TI
from updraft.scheduling.commands.manual_changes import apply_resets
from updraft.scheduling.decisions.clearing import Selection, resets, to_clear

SWEPT = """
from airflow.providers.standard.sensors.date_time import DateTimeSensorAsync
from airflow.sdk import BaseOperator
from tests.functional.deferrals.poll_triggers import FlagTrigger

class WaitsForFlag(BaseOperator):
    def execute(self, context):
        self.defer(trigger=FlagTrigger(self.task_id, poll_interval=60), method_name="done",
                   timeout=datetime.timedelta(hours=2))

    def done(self, context, event=None):
        return event

with DAG("swept", schedule=None, start_date=START):
    DateTimeSensorAsync(task_id="gone", target_time="{{ (logical_date + macros.timedelta(hours=1)).isoformat() }}")
    for task_id in ("lost_start", "failed", "lost_resume"):
        WaitsForFlag(task_id=task_id)
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    with mock_aws():
        env = DeferralEnv(tmp_path_factory.mktemp("sweep"), parallelism=4)
        env.add("swept", SWEPT)
        env.in_process = True  # the worker code without a child per try: the suite's time budget
        yield env


@pytest.mark.slow
def test_the_sweep_stops_orphans_and_leaves_no_deferred_try_without_its_wait(env):
    run = env.trigger("swept", logical_date=env.clock())
    env.step()
    tis = {task: env.ti("swept", run.run_id, task) for task in ("gone", "lost_start", "failed", "lost_resume")}
    assert {ti.state for ti in tis.values()} == {TI.DEFERRED}
    names = {task: execution_name(ti.key, ti.try_number, str(ti.try_id)) for task, ti in tis.items()}
    # The stop that a clear sends is lost (a time wait: its execution would wait on); a polling wait's start is
    # lost; another's execution fails; another's resume invoke is lost.
    gone_run = env.store.get_run("swept", run.run_id)
    dag = env.scheduler.dag("swept", gone_run.dag_hash)
    apply_resets(env.store, gone_run, resets(dag, to_clear(env.store.get_run_tis("swept", run.run_id),
                                                           Selection(frozenset({"gone"})))),
                 now=env.clock(), waits=None)
    del env.engine.executions[names["lost_start"]]
    env.engine.executions[names["failed"]].status = "FAILED"
    env.engine.executions[names["lost_resume"]].status = "SUCCEEDED"  # after its check recorded the event:
    resumed = tis["lost_resume"]
    assert env.store.apply_ti_change(resumed.key, expected=TI.DEFERRED, state=TI.DEFERRED,
                                     expected_try_id=resumed.try_id,
                                     fields={"trigger": {**resumed.trigger, "event": {"flag": "x"}, "times_out": False}})

    env.advance(minutes=4)  # the sweep waits for its interval
    assert env.engine.executions[names["gone"]].status == "RUNNING"
    assert names["lost_start"] not in env.engine.executions
    env.advance(minutes=1)
    env.step()
    assert env.engine.executions[names["gone"]].status == "ABORTED"  # its try was cleared: stopped
    again = env.ti("swept", run.run_id, "gone")
    assert (again.state, again.try_number) == (TI.DEFERRED, 2) and env.status_of(again) == "RUNNING"
    assert env.engine.executions[names["lost_start"]].status == "RUNNING"  # started by the sweep
    assert env.ti("swept", run.run_id, "lost_start").state == TI.DEFERRED
    failed = env.ti("swept", run.run_id, "failed")
    assert failed.state == TI.FAILED and "Trigger failure" in (env.log("swept", run.run_id, "failed") or "")
    assert env.ti("swept", run.run_id, "lost_resume").state == TI.SUCCESS  # resumed as its resume would have
    assert env.xcom("swept", run.run_id, "lost_resume") == {"flag": "x"}
    poll_triggers.READY.add("lost_start")
    env.advance(hours=1)
    assert env.states("swept", run.run_id) == {"gone": "success", "lost_start": "success", "failed": "failed",
                                               "lost_resume": "success"}
