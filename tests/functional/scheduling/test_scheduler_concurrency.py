"""Eight schedulers at once: no try dispatched twice, no limit exceeded at any moment, no run created twice,
nothing left stuck. moto is serialized (one request at a time), as real DynamoDB's single-item writes are atomic.
"""

from __future__ import annotations

import collections
import queue
import random
import threading

import pytest
from moto import mock_aws

from airflow.sdk import DAG, task
from tests.functional.scheduling.harness import START, Clock, held_slots, make_store, store_dags
from updraft.executors.base import Dispatch
from updraft.limits import room
from updraft.model.limits import PARALLELISM_LIMIT, pool_limit, run_tasks_limit
from updraft.model.states import DagRunState, TaskInstanceState
from updraft.scheduling.commands.triggering import trigger_dag
from updraft.scheduling.holding import limits_table
from updraft.scheduling.scheduler import Scheduler, SchedulerConfig
from updraft.scheduling.try_lifecycle import TryResult, finish_try, start_try

SCHEDULERS = 8
WORKERS = 4
PARALLELISM = 6
POOLS = {"p1": 1, "p2": 2, "p3": 3}


def _dags():
    dags = []
    for dag_id, pool, max_active_tasks, width in (("fan_p1", "p1", 16, 8), ("fan_p3", "p3", 2, 10),
                                                  ("mixed_p2", "p2", 3, 8)):
        with DAG(dag_id, schedule=None, start_date=START, max_active_tasks=max_active_tasks) as dag:

            @task
            def work():
                return None

            first = work.override(task_id="first", pool=pool)()
            for i in range(width):
                slots = 2 if pool == "p3" and i % 3 == 0 else 1
                first >> work.override(task_id=f"w{i}", pool=pool, pool_slots=slots, priority_weight=i)()
        dags.append(dag)
    return dags


class Occupancy:
    """Slots in use per limit, recorded at every start and finish of a try; the maxima are what we assert on."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now: collections.Counter = collections.Counter()
        self.peak: collections.Counter = collections.Counter()

    def change(self, item: Dispatch, pool: str, slots: int, sign: int) -> None:
        with self.lock:
            for limit, n in ((pool_limit(pool), slots), (run_tasks_limit(item.key.dag_id, item.key.run_id), 1),
                             (PARALLELISM_LIMIT, 1)):
                self.now[limit] += sign * n
                self.peak[limit] = max(self.peak[limit], self.now[limit])


class QueueExecutor:
    def __init__(self) -> None:
        self.queue: queue.Queue[Dispatch] = queue.Queue()
        self.count: collections.Counter = collections.Counter()
        self.lock = threading.Lock()

    def dispatch(self, items: list[Dispatch]) -> None:
        for item in items:
            with self.lock:
                self.count[(item.key, item.try_number)] += 1
            self.queue.put(item)


@pytest.mark.slow
def test_eight_schedulers_never_double_dispatch_or_exceed_a_limit(serialized_moto):
    with mock_aws():
        store = make_store()
        clock = Clock()
        for name, slots in POOLS.items():
            store.set_pool(name, slots)
        dags = _dags()
        store_dags(store, *dags, now=clock())
        runs = [trigger_dag(store, d.dag_id, now=clock(), run_id=f"r{i}") for d in dags for i in range(2)]
        executor = QueueExecutor()
        schedulers = [Scheduler(store, executor, SchedulerConfig(parallelism=PARALLELISM), clock=clock)
                      for _ in range(SCHEDULERS)]
        occupancy = Occupancy()
        stop = threading.Event()
        errors: list[BaseException] = []
        pools = {(d.dag_id, t.task_id): (t.pool, t.pool_slots) for d in dags for t in d.tasks}

        def scheduler_loop(scheduler: Scheduler) -> None:
            try:
                while not stop.is_set():
                    scheduler.run_pass()
            except BaseException as exc:  # surfaced by the main thread
                errors.append(exc)

        def worker_loop() -> None:
            scheduler = Scheduler(store, executor, SchedulerConfig(parallelism=PARALLELISM), clock=clock)
            try:
                while not stop.is_set():
                    try:
                        item = executor.queue.get(timeout=0.05)
                    except queue.Empty:
                        continue
                    if not start_try(store, item.key, item.try_id, now=clock()):
                        continue
                    pool, slots = pools[(item.key.dag_id, item.key.task_id)]
                    occupancy.change(item, pool, slots, +1)
                    threading.Event().wait(random.uniform(0, 0.003))
                    occupancy.change(item, pool, slots, -1)
                    dag = scheduler.dag(item.key.dag_id, store.get_run(item.key.dag_id, item.key.run_id).dag_hash)
                    finish_try(store, item.key, item.try_id, TryResult(TaskInstanceState.SUCCESS), now=clock(),
                               dag=dag)
                    scheduler.schedule_run(item.key.dag_id, item.key.run_id)
            except BaseException as exc:
                errors.append(exc)

        held_peak: collections.Counter = collections.Counter()
        limit_ids = [pool_limit(p) for p in POOLS] + [run_tasks_limit(r.dag_id, r.run_id) for r in runs] + [PARALLELISM_LIMIT]

        def monitor_loop() -> None:
            """Samples the limits' counters themselves: slots held by claimed tries, whatever the workers do."""
            while not stop.is_set():
                for limit_id in limit_ids:
                    held_peak[limit_id] = max(held_peak[limit_id], held_slots(store, limit_id))

        threads = [threading.Thread(target=scheduler_loop, args=(s,)) for s in schedulers]
        threads.append(threading.Thread(target=monitor_loop))
        threads += [threading.Thread(target=worker_loop) for _ in range(WORKERS)]
        for t in threads:
            t.start()
        try:
            deadline = threading.Event()
            for _ in range(600):
                if all(store.get_run(r.dag_id, r.run_id).state in (DagRunState.SUCCESS, DagRunState.FAILED)
                       for r in runs) or errors:
                    break
                deadline.wait(0.1)
        finally:
            stop.set()
            for t in threads:
                t.join()
        assert errors == []

        final = {(r.dag_id, r.run_id): store.get_run(r.dag_id, r.run_id).state for r in runs}
        assert set(final.values()) == {DagRunState.SUCCESS}, final
        # No try dispatched twice.
        assert executor.count and max(executor.count.values()) == 1
        # No limit exceeded at any moment.
        for name, slots in POOLS.items():
            assert occupancy.peak[pool_limit(name)] <= slots
        max_active_tasks = {dag.dag_id: dag.max_active_tasks for dag in dags}
        for r in runs:
            assert occupancy.peak[run_tasks_limit(r.dag_id, r.run_id)] <= max_active_tasks[r.dag_id]
        assert occupancy.peak[PARALLELISM_LIMIT] <= PARALLELISM
        for name, slots in POOLS.items():
            assert held_peak[pool_limit(name)] <= slots
        for r in runs:
            assert held_peak[run_tasks_limit(r.dag_id, r.run_id)] <= max_active_tasks[r.dag_id]
        assert held_peak[PARALLELISM_LIMIT] <= PARALLELISM
        # The limits were actually contended (otherwise the test proves nothing).
        assert occupancy.peak[pool_limit("p3")] >= 2
        # Nothing leaked: every slot is back.
        for name, slots in POOLS.items():
            assert held_slots(store, pool_limit(name)) == 0
            assert room(limits_table(store), pool_limit(name)) == slots
        every_ti = [ti for r in runs for ti in store.get_run_tis(r.dag_id, r.run_id)]
        assert {ti.state for ti in every_ti} == {TaskInstanceState.SUCCESS}
        assert {ti.try_number for ti in every_ti} == {1}
