"""Deferral end to end on a fake clock: a DAG whose tasks wait an hour and half an hour on Step Functions
(the deferral ASL on the local engine) runs to success with Airflow's states, while one worker runs the rest."""

from __future__ import annotations

import datetime as dt

import pytest
from moto import mock_aws

from tests.functional.deferrals.defer_harness import DeferralEnv
from tests.functional.scheduling.harness import held_slots
from updraft.limits import Ticket
from updraft.model.deferrals import ResumeRequest
from updraft.model.limits import pool_limit
from updraft.model.records import TIKey
from updraft.model.states import TaskInstanceState as TI
from updraft.runtime.worker import handle_resume
from updraft.scheduling.commands.manual_changes import apply_resets
from updraft.scheduling.decisions.clearing import Selection, resets, to_clear

DEFERRING = """
from airflow.providers.standard.sensors.date_time import DateTimeSensorAsync
from airflow.providers.standard.triggers.temporal import DateTimeTrigger
from airflow.sdk import BaseOperator

class HalfHourTrigger(DateTimeTrigger):
    def serialize(self):
        return ("defer_dag.HalfHourTrigger", {"moment": self.moment, "end_from_trigger": False})

class Countdown(BaseOperator):
    def execute(self, context):
        context["ti"].xcom_push(key="before", value="pushed before deferring")
        self.defer(trigger=HalfHourTrigger(moment=context["logical_date"] + datetime.timedelta(minutes=30)),
                   method_name="done", kwargs={"started": "yes"})

    def done(self, context, event=None, started=None):
        return {"event": event.isoformat(), "started": started, "try": context["ti"].try_number}

with DAG("defer_dag", schedule=None, start_date=START, default_args={"pool": "{pool}"}):
    wait = DateTimeSensorAsync(task_id="wait",
                               target_time="{{ (logical_date + macros.timedelta(hours=1)).isoformat() }}")
    mine = Countdown(task_id="mine")
    others = [PythonOperator(task_id=f"other_{i}", python_callable=lambda: 1, pool="default_pool")
              for i in range(3)]
    after = EmptyOperator(task_id="after", pool="default_pool")
    [wait, mine] >> after
"""


KEPT = """
from airflow.providers.standard.sensors.date_time import DateTimeSensorAsync

with DAG("kept_dag", schedule=None, start_date=START, default_args={"pool": "kept"}):
    [DateTimeSensorAsync(task_id=task_id,
                         target_time="{{ (logical_date + macros.timedelta(hours=1)).isoformat() }}")
     for task_id in ("wait", "mine")]
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """One world for the module: one worker, a pool that frees deferred slots and one that keeps them."""
    with mock_aws():
        env = DeferralEnv(tmp_path_factory.mktemp("deferral_runs"), parallelism=1)
        env.store.set_pool("waiters", 2)
        env.store.set_pool("kept", 1, include_deferred=True)
        env.add("defer_dag", DEFERRING.replace("{pool}", "waiters"))
        env.add("kept_dag", KEPT)
        yield env


def _ti(env, run_id, task_id, dag_id="defer_dag"):
    return env.store.get_ti(TIKey(dag_id, run_id, task_id))


@pytest.mark.slow
def test_waits_hold_no_worker_and_resume_with_airflow_states(env):
    run = env.trigger("defer_dag", logical_date=env.clock())
    env.step()
    states = env.states("defer_dag", run.run_id)
    # One worker (parallelism 1): both waits deferred, and the other tasks ran meanwhile.
    assert states == {"wait": "deferred", "mine": "deferred", "other_0": "success", "other_1": "success",
                      "other_2": "success"}
    mine = _ti(env, run.run_id, "mine")
    assert mine.trigger["classpath"] == "defer_dag.HalfHourTrigger" and mine.next_method == "done"
    assert mine.trigger["resume_at"] == (run.logical_date + dt.timedelta(minutes=30)).isoformat()
    assert mine.ticket is None and held_slots(env.store, pool_limit("waiters")) == 0
    deferred = {task: _ti(env, run.run_id, task) for task in ("wait", "mine")}
    assert {env.status_of(ti) for ti in deferred.values()} == {"RUNNING"}

    env.advance(minutes=30)  # (that a wait never ends early: tests/unit/local/test_local_step_functions.py)
    mine = _ti(env, run.run_id, "mine")
    assert (mine.state, mine.try_number, mine.next_method, mine.trigger) == (TI.SUCCESS, 1, None, None)
    assert env.xcom("defer_dag", run.run_id, "mine") == {
        "event": (run.logical_date + dt.timedelta(minutes=30)).isoformat(), "started": "yes", "try": 1}
    assert env.xcom("defer_dag", run.run_id, "mine", key="before") == "pushed before deferring"
    assert "Pausing task as DEFERRED" in env.log("defer_dag", run.run_id, "mine")

    env.advance(minutes=30)
    assert env.finished("defer_dag", run.run_id)
    assert env.store.get_run("defer_dag", run.run_id).state.value == "success"
    assert env.states("defer_dag", run.run_id)["after"] == "success"
    assert _ti(env, run.run_id, "wait").try_number == 1
    assert {env.status_of(ti) for ti in deferred.values()} == {"SUCCEEDED"}


@pytest.mark.slow
def test_a_pool_with_include_deferred_keeps_the_slot_while_waiting(env):
    run = env.trigger("kept_dag", logical_date=env.clock())
    env.step()
    states = env.states("kept_dag", run.run_id)
    # One slot, kept by whichever sensor deferred first: the other waits for it, scheduled.
    assert sorted(states.values()) == ["deferred", "scheduled"]
    deferred = next(t for t in ("wait", "mine") if states[t] == "deferred")
    holder = _ti(env, run.run_id, deferred, "kept_dag")
    assert Ticket.decode(holder.ticket).limit_ids == (pool_limit("kept"),)  # the pool's slot alone, kept
    assert held_slots(env.store, pool_limit("kept")) == 1
    # The first resumes on the slot it kept; the second then takes it and defers to a moment already past, so
    # its wait ends at once.
    env.advance(hours=1)
    assert env.store.get_run("kept_dag", run.run_id).state.value == "success"
    assert held_slots(env.store, pool_limit("kept")) == 0


@pytest.mark.slow
def test_a_clear_during_the_wait_stops_it_and_a_late_resume_changes_nothing(env):
    run = env.trigger("defer_dag", logical_date=env.clock())
    env.step()
    mine = _ti(env, run.run_id, "mine")
    chosen = to_clear(env.store.get_run_tis("defer_dag", run.run_id), Selection(frozenset({"mine"})))
    dag = env.scheduler.dag("defer_dag", env.store.get_run("defer_dag", run.run_id).dag_hash)
    apply_resets(env.store, env.store.get_run("defer_dag", run.run_id), resets(dag, chosen), now=env.clock(),
                 waits=env.waits)
    assert (env.status_of(mine), env.status_of(_ti(env, run.run_id, "wait"))) == ("ABORTED", "RUNNING")
    late = ResumeRequest(mine.key, mine.try_number, mine.try_id)
    assert handle_resume(late, store=env.store, scheduler=env.scheduler, now_fn=env.clock) is False
    assert _ti(env, run.run_id, "mine").state is None  # cleared, untouched by the late resume
    env.step()  # the cleared task runs again: a new try, deferred again with a new execution
    again = _ti(env, run.run_id, "mine")
    assert (again.state, again.try_number) == (TI.DEFERRED, 2)
    assert handle_resume(late, store=env.store, scheduler=env.scheduler, now_fn=env.clock) is False
    assert _ti(env, run.run_id, "mine").try_id == again.try_id
    env.advance(minutes=30)
    assert _ti(env, run.run_id, "mine").state == TI.SUCCESS
