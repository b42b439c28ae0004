"""Every handler's events delivered twice and out of order, to eight schedulers at once: the parse, the trigger,
the ticks, the dispatches (the worker's start), the workers' reports (finish) and the task-finished nudges. The
runs end as they would with one delivery each: no try started twice, no limit exceeded, nothing stuck."""

from __future__ import annotations

import collections
import random

import pytest
from moto import mock_aws

from airflow.sdk import DAG, task
from tests.functional.scheduling.harness import START, Clock, held_slots, make_store, scheduler_for, store_dags
from updraft.model.limits import pool_limit
from updraft.model.states import DagRunState, TaskInstanceState
from updraft.scheduling.commands.triggering import DagRunAlreadyExists, trigger_dag
from updraft.scheduling.try_lifecycle import TryResult, finish_try, start_try

SCHEDULERS = 8
POOL_SLOTS = 2


def _dag():
    with DAG("dups", schedule=None, start_date=START, max_active_tasks=3) as dag:

        @task
        def work():
            return None

        first = work.override(task_id="first", pool="p")()
        last = work.override(task_id="last", pool="p")()
        for i in range(3):
            first >> work.override(task_id=f"w{i}", pool="p")() >> last
    return dag


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1])
def test_duplicated_and_reordered_events_to_eight_schedulers(seed):
    rng = random.Random(seed)
    with mock_aws():
        store = make_store()
        clock = Clock()
        store.set_pool("p", POOL_SLOTS)
        for _ in range(2):  # the parser's S3 notification, delivered twice
            store_dags(store, _dag(), now=clock())
        run = trigger_dag(store, "dups", now=clock(), run_id="manual__dups")
        with pytest.raises(DagRunAlreadyExists):  # the API request retried: Airflow's 409, nothing changed
            trigger_dag(store, "dups", now=clock(), run_id="manual__dups")
        schedulers = [scheduler_for(store, clock) for _ in range(SCHEDULERS)]
        dag = schedulers[0][0].dag("dups", run.dag_hash)
        started: collections.Counter = collections.Counter()
        for _ in range(20):
            for scheduler, _executor in rng.sample(schedulers, len(schedulers)):
                scheduler.run_pass()  # a tick to every scheduler, in any order
            deliveries = [item for _, executor in schedulers for item in executor.take()] * 2
            rng.shuffle(deliveries)  # each dispatch twice, in any order
            for item in deliveries:
                if not start_try(store, item.key, item.try_id, now=clock()):
                    continue
                started[(item.key, item.try_number)] += 1
                assert held_slots(store, pool_limit("p")) <= POOL_SLOTS
                result = TryResult(TaskInstanceState.SUCCESS)
                for _ in range(2):  # the worker's report, sent twice
                    finish_try(store, item.key, item.try_id, result, now=clock(), dag=dag)
                for scheduler, _ in rng.sample(schedulers, 2):  # the task-finished nudge, twice, anywhere
                    scheduler.schedule_run("dups", run.run_id)
            if store.get_run("dups", run.run_id).state == DagRunState.SUCCESS:
                break
        assert store.get_run("dups", run.run_id).state == DagRunState.SUCCESS
        assert set(started.values()) == {1} and len(started) == 5  # each task once, no retry
        assert held_slots(store, pool_limit("p")) == 0
