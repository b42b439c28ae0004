"""Issue 16's "done when": one DAG with every kind of wait (a 1-hour ``DateTimeSensorAsync``, a reschedule-mode
``PythonSensor``, a custom deferrable operator with its own trigger, a deferrable ``TriggerDagRunOperator`` waiting
for its run, a deferrable ``ExternalTaskSensor``) runs with Airflow's states on a fake clock and ONE worker: the
other tasks run while the waits are pending (no worker held), the waits' pool slot is free while they wait, and
held with ``include_deferred``."""

from __future__ import annotations

import pytest
from moto import mock_aws

from tests.functional.deferrals import poll_triggers
from tests.functional.deferrals.defer_harness import DeferralEnv
from tests.functional.scheduling.harness import held_slots
from updraft.limits import Ticket
from updraft.model.limits import pool_limit
from updraft.model.states import TaskInstanceState as TI

WAITS = """
from airflow.providers.standard.operators.trigger_dagrun import TriggerDagRunOperator
from airflow.providers.standard.sensors.date_time import DateTimeSensorAsync
from airflow.providers.standard.sensors.external_task import ExternalTaskSensor
from airflow.providers.standard.sensors.python import PythonSensor
from airflow.sdk import BaseOperator, timezone
from tests.functional.deferrals.poll_triggers import FlagTrigger

class WaitsForFlag(BaseOperator):
    def execute(self, context):
        self.defer(trigger=FlagTrigger("all_waits", poll_interval=20), method_name="done",
                   timeout=datetime.timedelta(hours=2))

    def done(self, context, event=None):
        return event

def ten_minutes_in(logical_date, **_):
    return timezone.utcnow() >= logical_date + datetime.timedelta(minutes=10)

with DAG("child", schedule=None, start_date=START):
    PythonOperator(task_id="work", python_callable=lambda: "child work")

with DAG("all_waits", schedule=None, start_date=START, default_args={"pool": "waiters"}):
    waits = [
        DateTimeSensorAsync(task_id="an_hour", target_time="{{ (logical_date + macros.timedelta(hours=1)).isoformat() }}"),
        PythonSensor(task_id="python_poke", python_callable=ten_minutes_in, mode="reschedule", poke_interval=600,
                     timeout=7200),
        WaitsForFlag(task_id="custom"),
        TriggerDagRunOperator(task_id="trigger_child", trigger_dag_id="child", trigger_run_id="{{ run_id }}",
                              logical_date="{{ logical_date }}",
                              wait_for_completion=True, deferrable=True, poke_interval=60),
        ExternalTaskSensor(task_id="child_done", external_dag_id="child", external_task_id="work", deferrable=True,
                           poke_interval=60, timeout=7200),
    ]
    others = [PythonOperator(task_id=f"other_{i}", python_callable=lambda: 1, pool="default_pool")
              for i in range(2)]
    waits >> EmptyOperator(task_id="after", pool="default_pool")
"""
WAITING = {"an_hour": "deferred", "python_poke": "up_for_reschedule", "custom": "deferred",
           "trigger_child": "deferred", "child_done": "deferred"}


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    from tests.functional.runtime.rt_harness import HEADER

    with mock_aws():
        env = DeferralEnv(tmp_path_factory.mktemp("all_waits"), parallelism=1)  # one worker
        env.store.set_pool("waiters", 1)  # one slot for all five waits: each frees it when it waits
        folder = tmp_path_factory.mktemp("all_waits_dags")
        (folder / "all_waits.py").write_text(HEADER + WAITS)
        env.add_folder(folder)
        yield env


@pytest.mark.slow
def test_every_kind_of_wait_in_one_dag_holds_no_worker_and_no_slot(env):
    start = env.clock()
    run = env.trigger("all_waits", logical_date=start)
    env.step()
    states = env.states("all_waits", run.run_id)
    # One worker and one pool slot, yet every wait is waiting and the other tasks ran meanwhile.
    assert states == {**WAITING, "other_0": "success", "other_1": "success"}
    assert held_slots(env.store, pool_limit("waiters")) == 0
    deferred = [task for task, state in WAITING.items() if state == "deferred"]
    assert {task: env.ti("all_waits", run.run_id, task).ticket for task in deferred} == {t: None for t in deferred}
    child = env.store.get_run("child", run.run_id)  # TriggerDagRunOperator's run (trigger_run_id: the same id)
    assert child is not None and child.logical_date == start

    env.advance(minutes=1)  # the child runs; the cross-DAG waits see it at their next look
    assert env.states("child", child.run_id) == {"work": "success"}
    env.advance(minutes=1)
    assert {t: s for t, s in env.states("all_waits", run.run_id).items() if t in WAITING} == {
        **WAITING, "trigger_child": "success", "child_done": "success"}

    poll_triggers.READY.add("all_waits")  # the custom trigger fires at its next look (20 s)
    env.advance(seconds=20)
    assert env.states("all_waits", run.run_id)["custom"] == "success"
    assert env.xcom("all_waits", run.run_id, "custom") == {"flag": "all_waits"}

    wakes = env.wakes
    env.clock.advance(minutes=10)  # no scheduler tick: the sensor's next-poke wake claims the poke
    env.drain()
    assert env.states("all_waits", run.run_id)["python_poke"] == "success" and env.wakes == wakes + 1
    assert env.states("all_waits", run.run_id)["an_hour"] == "deferred"
    assert held_slots(env.store, pool_limit("waiters")) == 0

    env.advance(minutes=48)  # an hour after the start
    assert env.store.get_run("all_waits", run.run_id).state.value == "success"
    assert {ti.key.task_id: (ti.state, ti.try_number) for ti in env.store.get_run_tis("all_waits", run.run_id)} == {
        task: (TI.SUCCESS, 1) for task in (*WAITING, "other_0", "other_1", "after")}
    assert env.ti("all_waits", run.run_id, "python_poke").reschedule_count == 1

    # The same DAG with a pool that counts deferred tasks: the first wait to defer keeps the one slot.
    env.store.set_pool("waiters", 1, include_deferred=True)
    kept = env.trigger("all_waits", logical_date=env.clock(), run_id="kept")
    env.step()
    holding = [task for task in WAITING if env.ti("all_waits", kept.run_id, task).state == TI.DEFERRED]
    assert len(holding) == 1
    holder = env.ti("all_waits", kept.run_id, holding[0])
    assert Ticket.decode(holder.ticket).limit_ids == (pool_limit("waiters"),)  # the pool's slot alone, kept
    assert held_slots(env.store, pool_limit("waiters")) == 1
