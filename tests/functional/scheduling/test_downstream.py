"""The mini scheduler's incremental step (issue 19): a worker decides only the ended task's downstream, from the
items it depends on, and reads the whole run only where a wide fan-in or the run completes, or instances wait.

Workers are played as the worker Lambda plays them (``LambdaWorkers``: ``report_try``), and each run is driven by
one tick and then the workers alone: what the workers do not schedule would wait for a tick, so a run that ends
without one shows its ends scheduled everything.
"""

from __future__ import annotations

import collections
from collections.abc import Iterator

import pytest
from moto import mock_aws

from airflow.sdk import DAG, task
from tests.dynamo_requests import dynamo_requests, operations
from tests.functional.scheduling.harness import START, Clock, LambdaWorkers, make_store, scheduler_for, store_dags
from tests.unit.scheduling.helpers import serialized
from updraft.model.states import DagRunState, TaskInstanceState
from updraft.scheduling.downstream import DIRECT_UPSTREAMS, plan
from updraft.scheduling.triggering import trigger_dag
from updraft.store.dynamo import DynamoStore

WIDTH = DIRECT_UPSTREAMS + 1  # the fan-in is counted, not read


@pytest.fixture(scope="module")
def store() -> Iterator[DynamoStore]:
    with mock_aws():
        yield make_store("downstream")


def _fan_out(dag_id: str, width: int, **dag_kwargs) -> DAG:
    dag = DAG(dag_id, schedule=None, start_date=START, **dag_kwargs)

    @task(dag=dag)
    def work():
        return None

    with dag:
        middle = [work.override(task_id=f"m{i:02d}")() for i in range(width)]
        work.override(task_id="first")() >> middle >> work.override(task_id="last")()
    return dag


def _run_with_workers_only(store: DynamoStore, dag: DAG, *, duplicate: bool = False
                           ) -> tuple[LambdaWorkers, collections.Counter[str]]:
    """One tick (starts the run, claims its first task), then workers until nothing is dispatched."""
    clock = Clock()
    store_dags(store, dag, now=clock())
    trigger_dag(store, dag.dag_id, now=clock(), run_id="r")
    scheduler, executor = scheduler_for(store, clock, parallelism=128)
    workers = LambdaWorkers(store, scheduler, executor, clock)
    scheduler.run_pass()
    with dynamo_requests() as sent:
        while items := executor.take():
            for item in items:
                workers.run_one(item)
                if duplicate:  # at-least-once delivery: the same dispatch again, refused by its fenced start
                    assert not workers.run_one(item)
    return workers, collections.Counter(operations(sent))


def test_a_wide_fan_out_is_scheduled_by_its_workers_without_reading_the_run_per_task(store):
    # Every dispatch delivered twice (at least once delivery): the second is refused by its fenced start, so each
    # end is counted once.
    workers, sent = _run_with_workers_only(store, _fan_out("fan", WIDTH, max_active_tasks=WIDTH + 2),
                                           duplicate=True)
    assert store.get_run("fan", "r").state == DagRunState.SUCCESS
    assert sum(workers.started.values()) == WIDTH + 2 and set(workers.started.values()) == {1}
    # The whole run is read when the fan-in's last upstream ends and when the run's only leaf ends; the middle
    # tasks count on the run's ENDS item instead (an UpdateItem each), the first reads no instance.
    assert sent["Query"] <= 2, dict(sent)
    _, _, _, ends = store.get_run_meta_and_tis("fan", "r", ())
    assert ends.counts == {"last": WIDTH}


def test_instances_waiting_for_slots_are_claimed_by_the_ends_that_free_them(store):
    # max_active_tasks 1: the first's end leaves two middle tasks scheduled, waiting (the run is marked), and
    # each middle task's end schedules the whole run, which claims the next; no tick after the first.
    workers, _ = _run_with_workers_only(store, _fan_out("narrow", 3, max_active_tasks=1))
    assert store.get_run("narrow", "r").state == DagRunState.SUCCESS
    assert sum(workers.started.values()) == 5
    # Nothing waits any more: the last pass that read the whole run took the mark away.
    _, _, _, ends = store.get_run_meta_and_tis("narrow", "r", ())
    assert ends.waiting is None


def test_a_small_join_and_a_chain_are_decided_from_their_upstreams_items(store):
    dag = DAG("join", schedule=None, start_date=START)

    @task(dag=dag)
    def work():
        return None

    with dag:
        a, b = work.override(task_id="a")(), work.override(task_id="b")()
        c = work.override(task_id="c")()
        [a, b] >> c >> work.override(task_id="d")()
    _, sent = _run_with_workers_only(store, dag)
    assert store.get_run("join", "r").state == DagRunState.SUCCESS
    assert {ti.task_id: ti.state for ti in store.get_run_tis("join", "r")} == dict.fromkeys(
        "abcd", TaskInstanceState.SUCCESS)
    assert sent["Query"] == 1, dict(sent)  # the run's end only


def test_the_plan_reads_few_upstreams_counts_many_and_leaves_mapped_tasks_to_the_whole_run():
    fan = serialized(_fan_out("fan", WIDTH))
    first = plan(fan, "first")
    assert not first.whole_run and len(first.decide) == WIDTH and first.reads == ()
    assert plan(fan, "m00").counted == (("last", WIDTH),) and not plan(fan, "m00").decide
    assert plan(fan, "last").leaves == () and not plan(fan, "last").whole_run  # the only leaf

    dag = DAG("mapped", schedule=None, start_date=START)

    @task(dag=dag)
    def work(x=None):
        return None

    with dag:
        work.override(task_id="before")() >> work.expand(x=[1, 2])
        for i in range(DIRECT_UPSTREAMS + 1):
            work.override(task_id=f"leaf{i}")()
    mapped = serialized(dag)
    assert plan(mapped, "before").whole_run  # its downstream is mapped: instances the DAG does not tell
    assert plan(mapped, "leaf0").whole_run  # a mapped leaf: how many leaves end is not known
