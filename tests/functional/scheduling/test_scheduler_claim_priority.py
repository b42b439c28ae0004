"""Through the scheduler (not only the pure sort), a one-slot pool is handed out highest
effective priority first, pool_slots counted. Effective priority uses Airflow's default ``downstream`` weight rule.
"""

from __future__ import annotations

from airflow.sdk import DAG, task
from tests.functional.scheduling.harness import START, Workers, held_slots, store_dags
from updraft.limits import room, size
from updraft.model.limits import pool_limit, run_tasks_limit
from updraft.model.records import TIKey
from updraft.model.states import DagRunState
from updraft.scheduling.commands.triggering import trigger_dag
from updraft.scheduling.holding import limits_table


def test_a_one_slot_pool_goes_to_the_highest_effective_priority_first(env):
    store, clock, scheduler, executor = env
    store.set_pool("one", 1)
    with DAG("prio", schedule=None, start_date=START) as dag:

        @task
        def work():
            return None

        # effective (downstream rule): low = 1 + 5 (its downstream "after") = 6; high = 5; mid = 3; after = 5
        low = work.override(task_id="low", pool="one", priority_weight=1)()
        low >> work.override(task_id="after", priority_weight=5)()
        work.override(task_id="high", pool="one", priority_weight=5)()
        work.override(task_id="mid", pool="one", priority_weight=3)()
    store_dags(store, dag, now=clock())
    run = trigger_dag(store, "prio", now=clock())

    order: list[str] = []
    workers = Workers(store, scheduler, executor, clock)
    original = workers.run_one

    def recording(item):
        order.append(item.key.task_id)
        return original(item)

    workers.run_one = recording
    scheduler.run_pass()
    assert held_slots(store, pool_limit("one")) == 1  # one slot, one holder
    assert workers.run_to_end("prio", run.run_id).state == DagRunState.SUCCESS
    pooled = [t for t in order if t != "after"]
    assert pooled == ["low", "high", "mid"]


def test_a_try_needing_more_slots_than_free_waits_and_a_smaller_one_is_not_blocked_by_it(env):
    store, clock, scheduler, _ = env
    store.set_pool("three", 3)
    with DAG("slots", schedule=None, start_date=START) as dag:

        @task
        def work():
            return None

        work.override(task_id="big", pool="three", pool_slots=2, priority_weight=10)()
        work.override(task_id="big2", pool="three", pool_slots=2, priority_weight=9)()
        work.override(task_id="small", pool="three", pool_slots=1, priority_weight=1)()
    store_dags(store, dag, now=clock())
    trigger_dag(store, "slots", now=clock())
    report = scheduler.run_pass()
    # big (2 slots) then big2 does not fit in the 1 left, small (1 slot) does: Airflow's pool accounting.
    assert sorted(d.key.task_id for d in report.dispatched) == ["big", "small"]
    assert held_slots(store, pool_limit("three")) == 3 and room(limits_table(store), pool_limit("three")) == 0


def test_a_dags_max_active_tasks_changed_resizes_its_running_runs_limit(env):
    store, clock, scheduler, _ = env

    def wide(max_active_tasks: int) -> DAG:
        with DAG("resized", schedule=None, start_date=START, max_active_tasks=max_active_tasks) as dag:
            for i in range(4):
                task(lambda: None, task_id=f"t{i}")()
        return dag

    store_dags(store, wide(3), now=clock())
    run = trigger_dag(store, "resized", now=clock())
    scheduler.run_pass()  # its claims create the run's limit at 3 (all taken)
    table = limits_table(store)
    assert size(table, run_tasks_limit("resized", run.run_id)) == 3
    store_dags(store, wide(1), now=clock())
    assert size(table, run_tasks_limit("resized", run.run_id)) == 1
    assert room(table, run_tasks_limit("resized", run.run_id)) == 0  # over its new size until two end


def test_a_batch_a_pool_cannot_hold_whole_is_claimed_one_by_one_up_to_the_pool(env):
    # Five tries of one run with the same limits: one transaction would take 5 of the pool's 4 slots. Refused
    # whole, they are claimed one by one: the 4 highest go, the last is refused by the pool.
    store, clock, scheduler, executor = env
    store.set_pool("four", 4)
    with DAG("batched", schedule=None, start_date=START) as dag:
        for i in range(5):
            task(lambda: None, task_id=f"t{i}", pool="four", priority_weight=10 - i, weight_rule="absolute")()
    store_dags(store, dag, now=clock())
    run = trigger_dag(store, "batched", now=clock())
    report = scheduler.run_pass()
    assert sorted(d.key.task_id for d in executor.take()) == ["t0", "t1", "t2", "t3"]
    assert "pool" in report.not_claimed[TIKey("batched", run.run_id, "t4").label].stored
    assert held_slots(store, pool_limit("four")) == 4
