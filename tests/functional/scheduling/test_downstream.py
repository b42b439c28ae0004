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

from airflow.sdk import DAG, TaskGroup, task, task_group
from tests.dynamo_requests import dynamo_requests, operations
from tests.functional.scheduling.harness import (
    START,
    Clock,
    LambdaWorkers,
    make_store,
    scheduler_for,
    store_dags,
    succeed,
)
from tests.unit.scheduling.helpers import serialized
from updraft.executors.base import Dispatch
from updraft.model.records import TIKey
from updraft.model.states import DagRunState, TaskInstanceState
from updraft.scheduling.commands.manual_changes import apply_resets
from updraft.scheduling.commands.triggering import trigger_dag
from updraft.scheduling.decisions.clearing import Selection, resets, to_clear
from updraft.scheduling.downstream import DIRECT_UPSTREAMS, Plan, plan
from updraft.scheduling.try_lifecycle import TryResult
from updraft.store.dynamo import DynamoStore

WIDTH = DIRECT_UPSTREAMS + 1  # the fan-in is counted, not read


@pytest.fixture(scope="module")
def store() -> Iterator[DynamoStore]:
    with mock_aws():
        yield make_store("downstream")


def _fan_out(dag_id: str, width: int, last_rule: str = "all_success", **dag_kwargs) -> DAG:
    dag = DAG(dag_id, schedule=None, start_date=START, **dag_kwargs)

    @task(dag=dag)
    def work():
        return None

    with dag:
        middle = [work.override(task_id=f"m{i:02d}")() for i in range(width)]
        work.override(task_id="first")() >> middle >> work.override(task_id="last", trigger_rule=last_rule)()
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


@pytest.mark.slow
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


def test_a_wide_fan_in_that_one_success_decides_is_decided_at_the_first_success(store):
    # Airflow's loop starts a one_success task at its first upstream's success; counting the fan-in would leave
    # it to the last upstream's end (or a tick).
    dag = _fan_out("early", WIDTH, last_rule="one_success", max_active_tasks=WIDTH + 2)
    assert plan(serialized(dag), "m00").decide == ("last",)
    clock = Clock()
    store_dags(store, dag, now=clock())
    trigger_dag(store, "early", now=clock(), run_id="r")
    scheduler, executor = scheduler_for(store, clock, parallelism=128)
    workers = LambdaWorkers(store, scheduler, executor, clock)
    scheduler.run_pass()
    (first,) = executor.take()
    workers.run_one(first)
    middles = executor.take()
    assert len(middles) == WIDTH
    workers.run_one(middles[0])
    last = store.get_ti(TIKey("early", "r", "last"))
    assert last is not None and last.state == TaskInstanceState.QUEUED


@pytest.mark.slow
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


def _mapped(dag_id: str, width: int, *, leaf: bool = False, retries: int = 0) -> DAG:
    """first >> mapped (``width`` instances) >> reduce, or with the mapped task as the run's leaf."""
    dag = DAG(dag_id, schedule=None, start_date=START, max_active_tasks=width + 2)

    @task(dag=dag, retries=retries, retry_delay=0)
    def work(x=None):
        return None

    with dag:
        mapped = work.override(task_id="first")() >> work.override(task_id="mapped").expand(x=list(range(width)))
        if not leaf:
            mapped >> work.override(task_id="reduce")()
    return dag


def _queries_per_end(store: DynamoStore, dag: DAG, run_id: str = "r", **worker_kwargs
                     ) -> tuple[LambdaWorkers, list[tuple[str, int]]]:
    """One tick, then workers alone: the Queries each try's end sent, in the order the tries ran."""
    clock = Clock()
    store_dags(store, dag, now=clock())
    trigger_dag(store, dag.dag_id, now=clock(), run_id=run_id)
    scheduler, executor = scheduler_for(store, clock, parallelism=128)
    workers = LambdaWorkers(store, scheduler, executor, clock, **worker_kwargs)
    scheduler.run_pass()
    queries = []
    while items := executor.take():
        for item in items:
            with dynamo_requests() as sent:
                workers.run_one(item)
            queries.append((item.key.task_id, operations(sent).count("Query")))
    return workers, queries


@pytest.mark.slow
def test_a_mapped_instances_end_reads_no_run_until_the_last_one_which_schedules_the_reduce(store):
    workers, queries = _queries_per_end(store, _mapped("mapcount", WIDTH))
    assert store.get_run("mapcount", "r").state == DagRunState.SUCCESS  # no tick after the first
    assert [ti.task_id for ti in store.get_run_tis("mapcount", "r")].count("mapped") == WIDTH
    # Each mapped end counts on the run's ENDS item; only the last one's reads the run (a Query of each of its
    # partition's shards: a mapped task's run has several), and schedules the reduce.
    shards = store.run_shard_count("mapcount", "r")
    assert shards > 1
    assert [n for task_id, n in queries if task_id == "mapped"] == [0] * (WIDTH - 1) + [shards]
    assert sum(workers.started.values()) == WIDTH + 2
    _, _, _, ends = store.get_run_meta_and_tis("mapcount", "r", ())
    assert (ends.counts, ends.expanded) == ({"mapped": WIDTH}, {"mapped": WIDTH})


@pytest.mark.slow
def test_a_mapped_leaf_ends_the_run_at_its_last_instance_and_a_retry_counts_once(store):
    # Instance 1 fails its first try (up_for_retry: not counted, it reads the run, which claims the retry at once).
    workers, queries = _queries_per_end(store, _mapped("mapleaf", WIDTH, leaf=True, retries=1), outcome=lambda d: (
        TryResult(TaskInstanceState.FAILED) if (d.key.map_index, d.try_number) == (1, 1) else succeed(d)))
    assert store.get_run("mapleaf", "r").state == DagRunState.SUCCESS
    assert workers.started[(TIKey("mapleaf", "r", "mapped", 1), 2)] == 1
    mapped = [n for task_id, n in queries if task_id == "mapped"]
    # Two reads of the run, a Query per shard each: the retried try's end, and the last end (the run's).
    assert len(mapped) == WIDTH + 1 and sum(mapped) == 2 * store.run_shard_count("mapleaf", "r")
    _, _, _, ends = store.get_run_meta_and_tis("mapleaf", "r", ())
    assert (ends.counts, ends.expanded) == ({"mapped": WIDTH}, {"mapped": WIDTH})


def test_a_cleared_mapped_task_counted_twice_looks_early_and_still_schedules_its_reduce(store):
    _queries_per_end(store, _mapped("mapclear", 3), run_id="r")
    run = store.get_run("mapclear", "r")
    sdag = store.get_serialized_dag("mapclear", run.dag_hash)
    chosen = to_clear(store.get_run_tis("mapclear", "r"), Selection(frozenset({"mapped", "reduce"})))
    apply_resets(store, run, resets(sdag, chosen), now=START)
    clock = Clock()
    scheduler, executor = scheduler_for(store, clock, parallelism=128)
    workers = LambdaWorkers(store, scheduler, executor, clock)
    scheduler.run_pass()  # starts the run again and claims the mapped instances
    workers.drain()
    assert store.get_run("mapclear", "r").state == DagRunState.SUCCESS  # no tick after the first
    assert {(ti.task_id, ti.try_number, ti.state) for ti in store.get_run_tis("mapclear", "r")} == {
        ("first", 1, TaskInstanceState.SUCCESS), ("mapped", 2, TaskInstanceState.SUCCESS),
        ("reduce", 2, TaskInstanceState.SUCCESS)}
    _, _, _, ends = store.get_run_meta_and_tis("mapclear", "r", ())
    assert ends.counts == {"mapped": 6}  # over the expansion: every end of the rerun looked at the run


def test_a_mapped_task_without_its_expansion_recorded_reads_the_run_at_every_end(store, monkeypatch):
    # A run expanded before its expansions were recorded (or the record lost): nothing waits on a missing number.
    monkeypatch.setattr(DynamoStore, "record_expansions", lambda *args: None)
    _, queries = _queries_per_end(store, _mapped("mapnone", 3))
    assert store.get_run("mapnone", "r").state == DagRunState.SUCCESS
    # Every end reads the run: a Query of each shard of its partition.
    assert [n for task_id, n in queries if task_id == "mapped"] == [store.run_shard_count("mapnone", "r")] * 3


def test_the_plan_counts_plain_mapped_tasks_only():
    assert plan(serialized(_mapped("plain", 2)), "mapped") == Plan(False, mapped=True)
    dag = DAG("early", schedule=None, start_date=START)

    @task(dag=dag)
    def work(x=None):
        return None

    with dag:
        work.override(task_id="first")() >> work.override(task_id="mapped").expand(x=[1, 2]) >> [
            work.override(task_id="any", trigger_rule="one_success")(), work.override(task_id="all")()]
        work.override(task_id="past", depends_on_past=True).expand(x=[1])
        with TaskGroup("group"):
            work.override(task_id="in_group").expand(x=[1])

        @task_group(dag=dag)
        def mapped_group(x):
            work.override(task_id="member")(x)

        mapped_group.expand(x=[1, 2])
    early = serialized(dag)
    # A one_success downstream starts at the first success, as Airflow's: every end reads the run.
    assert plan(early, "mapped").whole_run and not plan(early, "mapped").mapped
    assert plan(early, "past").whole_run
    assert plan(early, "group.in_group").mapped  # a plain task group: its id has a dot (one ENDS attribute)
    assert plan(early, "mapped_group.member").whole_run  # a mapped task group's instances follow their group's


def test_a_zero_length_expansion_counts_nothing_and_its_cleared_run_records_the_new_expansion(store):
    dag = DAG("mapzero", schedule=None, start_date=START, max_active_tasks=5)

    @task(dag=dag)
    def work(x=None):
        return None

    with dag:
        work.override(task_id="mapped").expand(x=work.override(task_id="first")())
    # The first try of "first" returns an empty list, its rerun three values.
    def outcome(dispatch: Dispatch) -> TryResult:
        first = dispatch.key.task_id == "first"
        return TryResult(TaskInstanceState.SUCCESS, xcom_length={1: 0, 2: 3}[dispatch.try_number] if first else None)

    _queries_per_end(store, dag, outcome=outcome)
    states = {(ti.task_id, ti.map_index): ti.state for ti in store.get_run_tis("mapzero", "r")}
    assert states == {("first", -1): TaskInstanceState.SUCCESS, ("mapped", -1): TaskInstanceState.SKIPPED}
    _, _, _, ends = store.get_run_meta_and_tis("mapzero", "r", ())
    assert ends.expanded == {} and "mapped" not in ends.counts

    run = store.get_run("mapzero", "r")
    chosen = to_clear(store.get_run_tis("mapzero", "r"), Selection(frozenset({"first", "mapped"})))
    apply_resets(store, run, resets(store.get_serialized_dag("mapzero", run.dag_hash), chosen), now=START)
    clock = Clock()
    scheduler, executor = scheduler_for(store, clock, parallelism=128)
    workers = LambdaWorkers(store, scheduler, executor, clock, outcome=outcome)
    scheduler.run_pass()
    workers.drain()
    assert store.get_run("mapzero", "r").state == DagRunState.SUCCESS  # no tick after the first
    _, _, _, ends = store.get_run_meta_and_tis("mapzero", "r", ())
    assert (ends.counts, ends.expanded) == ({"mapped": 3}, {"mapped": 3})
