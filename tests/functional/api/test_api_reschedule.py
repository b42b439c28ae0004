"""A reschedule-mode sensor waiting for its next poke, as the REST API shows it: ``up_for_reschedule`` with its
try number kept, one try in its history, and the dependencies saying when it will be poked again."""

from __future__ import annotations

import datetime as dt

from airflow.providers.standard.sensors.python import PythonSensor
from airflow.sdk import DAG
from tests.functional.scheduling.harness import Clock, Workers, scheduler_for, store_dags
from updraft.model.states import TaskInstanceState
from updraft.scheduling.commands.triggering import trigger_dag
from updraft.scheduling.try_lifecycle import TryResult

START = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


def test_a_rescheduled_sensor_in_the_api(api, store):
    with DAG("poked", schedule=None, start_date=START) as dag:
        PythonSensor(task_id="wait", python_callable=lambda: False, mode="reschedule", poke_interval=3600)
    clock = Clock(dt.datetime.now(dt.UTC).replace(microsecond=0))  # the API's dependencies are evaluated now
    store_dags(store, dag, now=clock())
    scheduler, executor = scheduler_for(store, clock)
    next_poke = clock() + dt.timedelta(hours=1)
    workers = Workers(store, scheduler, executor, clock,
                      outcome=lambda _: TryResult(TaskInstanceState.UP_FOR_RESCHEDULE, reschedule_date=next_poke))
    run = trigger_dag(store, "poked", now=clock())
    scheduler.run_pass()
    workers.drain()
    clock.advance(seconds=1)
    scheduler.run_pass()  # not claimed again: its next poke is an hour away
    assert workers.drain() == 0

    base = f"/api/v2/dags/poked/dagRuns/{run.run_id}/taskInstances/wait"
    ti = api.get(base)
    assert ti.status == 200, ti.body
    assert (ti.body["state"], ti.body["try_number"]) == ("up_for_reschedule", 1)
    listed = api.get(f"/api/v2/dags/poked/dagRuns/{run.run_id}/taskInstances", query={"state": "up_for_reschedule"})
    assert [t["task_id"] for t in listed.body["task_instances"]] == ["wait"]
    tries = api.get(base + "/tries")
    assert [(t["try_number"], t["state"]) for t in tries.body["task_instances"]] == [(1, "up_for_reschedule")]
    deps = api.get(base + "/dependencies").body["dependencies"]
    assert [d["name"] for d in deps] == ["Ready To Reschedule"]
    assert f"will be rescheduled at {next_poke.isoformat()}" in deps[0]["reason"]
