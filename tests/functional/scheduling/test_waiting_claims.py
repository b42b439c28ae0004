"""An end in a run whose instances wait for slots claims the best waiting ones through the run's waiting index
(``scheduling.waiting_claims``, issue 19): reads bounded by the slots it frees, not by the run's size; in
Airflow's claim order; a stale index hit is harmless; the whole run only when nothing is found, which clears a
stale mark. Workers are played as the worker Lambda plays them (``LambdaWorkers``)."""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Iterator
from unittest import mock

import pytest
from moto import mock_aws

from airflow.sdk import DAG, task
from tests.dynamo_requests import dynamo_requests, operations
from tests.functional.scheduling.harness import (
    START,
    Clock,
    LambdaWorkers,
    held_slots,
    make_store,
    scheduler_for,
    store_dags,
)
from updraft import limits
from updraft.limits import counters, ensure
from updraft.model.limits import pool_limit, run_tasks_limit
from updraft.model.records import TIKey
from updraft.model.states import DagRunState, TaskInstanceState
from updraft.scheduling.commands.triggering import trigger_dag
from updraft.scheduling.holding import limits_table, transition_releasing
from updraft.scheduling.try_lifecycle import TryResult
from updraft.store import keys
from updraft.store.dynamo import DynamoStore


@pytest.fixture(scope="module")
def store() -> Iterator[DynamoStore]:
    with mock_aws():
        yield make_store("waiting-claims")


def _started(store: DynamoStore, dag: DAG, **config) -> LambdaWorkers:
    """The DAG triggered and one tick run: the tries it claimed are dispatched, the others wait."""
    clock = Clock()
    store_dags(store, dag, now=clock())
    trigger_dag(store, dag.dag_id, now=clock(), run_id="r")
    scheduler, executor = scheduler_for(store, clock, **{"parallelism": 128, **config})
    scheduler.run_pass()
    return LambdaWorkers(store, scheduler, executor, clock)


def _mapped(dag_id: str, width: int, *, leaf: bool = False, max_active_tasks: int = 2) -> DAG:
    dag = DAG(dag_id, schedule=None, start_date=START, max_active_tasks=max_active_tasks)

    @task(dag=dag)
    def work(x=None):
        return None

    with dag:
        mapped = work.expand(x=list(range(width)))
        if not leaf:
            mapped >> work.override(task_id="after")()
    return dag


def _one_end(store: DynamoStore, workers: LambdaWorkers) -> tuple[list[str], int, int]:
    """One dispatched try run to its end: the requests it sent, the task instances its reads named, and the
    whole-run reads (``get_run_tis``) it made."""
    item = workers.executor.take()[0]
    named = collections.Counter[str]()
    batch_read = store.get_run_meta_and_tis

    def counting(dag_id, run_id, ti_keys, **kwargs):
        ti_keys = list(ti_keys)
        named["tis"] += len(ti_keys)
        return batch_read(dag_id, run_id, ti_keys, **kwargs)

    with mock.patch.object(store, "get_run_meta_and_tis", counting), \
            mock.patch.object(store, "get_run_tis", wraps=store.get_run_tis) as whole, dynamo_requests() as sent:
        assert workers.run_one(item)
    return operations(sent), named["tis"], whole.call_count


@pytest.mark.slow
def test_an_end_in_a_waiting_run_reads_a_few_items_whatever_the_runs_size(store):
    # A mapped task at max_active_tasks 2: the tick claims two instances, the others wait (the run is marked).
    seen = {}
    for width in (8, 40):
        workers = _started(store, _mapped(f"wide{width}", width))
        assert store.get_run_meta_and_tis(f"wide{width}", "r", ())[3].waiting is not None
        sent, named, whole = _one_end(store, workers)
        assert whole == 0  # the run is not read whole
        assert sent.count("Query") == 1  # the waiting index's
        assert named <= 4  # the index's first hits: the slot it frees and a few spare
        (claimed,) = workers.executor.take()
        assert claimed.key.map_index == 2  # the next in map-index order
        seen[width] = sorted(sent)
    assert seen[8] == seen[40]  # the same requests, whatever the run's size


def test_a_mapped_leafs_end_gives_its_slots_to_the_next_waiting_instance(store):
    workers = _started(store, _mapped("leaf", 5, leaf=True))
    item = workers.executor.take()[0]
    with dynamo_requests() as sent:
        assert workers.run_one(item)
    # One transaction: the end, and the next instance's claim taking its slots (``HandOver``).
    assert operations(sent).count("TransactWriteItems") == 1
    (claimed,) = workers.executor.take()
    assert store.get_ti(item.key).ticket is None and store.get_ti(claimed.key).ticket
    assert held_slots(store, run_tasks_limit("leaf", "r")) == 2  # max_active_tasks: the ended one gave its slot


@pytest.mark.slow
def test_waiting_instances_are_claimed_in_airflows_order(store):
    # One task at a time: the tick claims the highest priority; each end then claims the best waiting one:
    # priority weight first, then map index.
    dag = DAG("ordered", schedule=None, start_date=START, max_active_tasks=1)

    @task(dag=dag)
    def work(x=None):
        return None

    with dag:
        work.override(task_id="first", priority_weight=20, weight_rule="absolute")()
        for task_id, weight in {"low": 1, "high": 9}.items():
            work.override(task_id=task_id, priority_weight=weight, weight_rule="absolute").expand(x=[0, 1, 2])
    workers = _started(store, dag)
    order = []
    with mock.patch.object(workers.scheduler, "schedule_run", wraps=workers.scheduler.schedule_run) as looks:
        while items := workers.executor.take():
            order += [(item.key.task_id, item.key.map_index) for item in items]
            for item in items:
                workers.run_one(item)
    assert order == [("first", -1), ("high", 0), ("high", 1), ("high", 2), ("low", 0), ("low", 1), ("low", 2)]
    assert store.get_run("ordered", "r").state == DagRunState.SUCCESS
    # The run read whole three times: after the unmapped task's end, and at each mapped task's last instance (its
    # count complete); the last of them finds nothing waiting (clearing the mark) and ends the run.
    assert looks.call_count == 3


def _held_back(store: DynamoStore, dag_id: str, pool: str) -> tuple[LambdaWorkers, TIKey]:
    """A run of ``dag_id`` at max_active_tasks 2: a task in ``pool`` with the highest priority, which the tick
    cannot claim, and 5 mapped instances in the default pool, 2 claimed and 3 waiting. The held-back task's key."""
    dag = DAG(dag_id, schedule=None, start_date=START, max_active_tasks=2)

    @task(dag=dag)
    def work(x=None):
        return None

    with dag:
        work.override(task_id="held", pool=pool, priority_weight=100, weight_rule="absolute")()
        work.expand(x=list(range(5)))
    workers = _started(store, dag)
    held = TIKey(dag_id, "r", "held")
    assert store.get_ti(held).state == TaskInstanceState.SCHEDULED
    return workers, held


def _one_end_claims_the_next_mapped_instance(store: DynamoStore, workers: LambdaWorkers, held: TIKey) -> None:
    first, _ = workers.executor.take()
    assert workers.run_one(first)
    (claimed,) = workers.executor.take()  # the end's freed slots go to the next mapped instance
    assert (claimed.key.task_id, claimed.key.map_index) == ("work", 2)
    assert store.get_ti(held).state == TaskInstanceState.SCHEDULED  # it waits for its pool


def test_an_instance_in_a_missing_pool_does_not_stop_an_end_claiming_the_next(store):
    """A higher-priority instance whose pool does not exist waits for the pool, not for a slot: it stays out of
    the index, where as the first hit it was the one every end tried (refused) and the only one."""
    workers, held = _held_back(store, "nopool", "nowhere")
    assert held not in store.waiting_tis("nopool", "r", limit=10)
    _one_end_claims_the_next_mapped_instance(store, workers, held)


def test_an_instance_its_full_pool_holds_back_does_not_stop_an_end_claiming_the_next(store):
    """The first waiting instance in claim order needs a named pool that is full (held by another DAG's try):
    the slots an end of a default-pool instance frees cannot start it, so the end passes over it to the next
    waiting instance, as Airflow's loop passes over a task its pool holds back."""
    store.set_pool("busy", 1)
    table = limits_table(store)
    assert ensure(table, pool_limit("busy"), 1)
    assert table.transact([counters.take(table, pool_limit("busy"), 0, 1)]).landed  # another DAG's try holds it
    workers, held = _held_back(store, "heldback", "busy")
    assert store.waiting_tis("heldback", "r", limit=1) == [held]  # first in claim order
    _one_end_claims_the_next_mapped_instance(store, workers, held)


def test_a_stale_index_hit_is_dropped_and_the_next_waiting_instance_claimed(store):
    workers = _started(store, _mapped("stale", 4, leaf=True))
    first, second = workers.executor.take()
    # ``second`` is queued, but an index entry says it waits, first in order: the index lagging its claim.
    T = store.models.task_instance
    T(keys.run_pk("stale", "r"), keys.ti_sk("work", second.key.map_index)).update(actions=[
        T.waiting_pk.set(keys.run_pk("stale", "r")),
        T.waiting_sk.set(keys.waiting_sk(100, second.key.map_index, "work"))])
    assert store.waiting_tis("stale", "r", limit=1) == [second.key]
    assert workers.run_one(first)
    (claimed,) = workers.executor.take()
    assert claimed.key.map_index == 2
    left = store.get_ti(second.key)
    assert (left.state, left.try_id) == (TaskInstanceState.QUEUED, second.try_id)  # the stale hit left alone


def test_a_stale_mark_is_cleared_by_the_whole_run_when_nothing_is_found(store):
    workers = _started(store, _mapped("marked", 2, leaf=True), parallelism=128)
    store.mark_waiting("marked", "r")  # nothing waits: the mark is stale, the index empty
    with mock.patch.object(workers.scheduler, "schedule_run", wraps=workers.scheduler.schedule_run) as looks:
        assert workers.run_one(workers.executor.take()[0])
    assert looks.call_count == 1
    assert store.get_run_meta_and_tis("marked", "r", ())[3].waiting is None


def test_a_small_run_is_read_whole_and_kept_out_of_the_index(store):
    dag = DAG("small", schedule=None, start_date=START, max_active_tasks=1)

    @task(dag=dag)
    def work():
        return None

    with dag:
        for task_id in "abc":
            work.override(task_id=task_id)()
    workers = _started(store, dag)
    # b and c wait, but not in the index: it is never read in a run this small, so never written either.
    assert store.waiting_tis("small", "r", limit=10) == []
    with mock.patch.object(store, "waiting_tis", wraps=store.waiting_tis) as index:
        assert workers.drain() == 3
    assert index.call_count == 0
    assert store.get_run("small", "r").state == DagRunState.SUCCESS


def test_an_instance_leaves_the_index_when_it_is_queued_or_cleared(store):
    workers = _started(store, _mapped("leaves", 5))
    assert [k.map_index for k in store.waiting_tis("leaves", "r", limit=10)] == [2, 3, 4]
    assert store.reset_ti(TIKey("leaves", "r", "work", 4), expected=TaskInstanceState.SCHEDULED,
                          expected_try_id=None, fields={})
    assert [k.map_index for k in store.waiting_tis("leaves", "r", limit=10)] == [2, 3]
    workers.drain()
    assert store.get_run("leaves", "r").state == DagRunState.SUCCESS
    assert store.waiting_tis("leaves", "r", limit=10) == []


def test_a_try_that_ends_before_its_runs_waiting_mark_is_written_does_not_strand_what_waits(store):
    """The root's end claims the fan-out's first two middles and leaves the rest waiting, then marks the run. A
    middle that ends in between (another worker) gives its slot back, reads no mark and claims nothing: the pass
    that set the mark reads the run again and claims into that slot, so the middles go on without a tick."""
    dag = DAG("markrace", schedule=None, start_date=START, max_active_tasks=2)
    with dag:
        root, last = task(lambda: None, task_id="root")(), task(lambda: None, task_id="last")()
        for i in range(10):
            root >> task(lambda: None, task_id=f"m{i}")() >> last
    workers = _started(store, dag)
    other, _ = scheduler_for(store, workers.clock, parallelism=128)
    elsewhere = LambdaWorkers(store, other, workers.executor, workers.clock)  # another worker Lambda
    mark, ended = store.mark_waiting, []

    def a_middle_ends_first(dag_id, run_id):
        middle = next(item for item in workers.executor.take() if item.key.task_id.startswith("m"))
        assert elsewhere.run_one(middle)
        ended.append(middle.key.task_id)
        return mark(dag_id, run_id)

    (root_item,) = workers.executor.take()
    with mock.patch.object(store, "mark_waiting", side_effect=a_middle_ends_first):
        assert workers.run_one(root_item)
    states = collections.Counter(ti.state for ti in store.get_run_tis("markrace", "r"))
    assert len(ended) == 1
    assert states[TaskInstanceState.SUCCESS] == 2  # the root and the middle that ended before the mark
    assert states[TaskInstanceState.QUEUED] == 2  # its slot was claimed again: max_active_tasks' two in flight
    assert states[TaskInstanceState.SCHEDULED] == 7


def test_the_tick_that_sets_a_runs_waiting_mark_looks_at_the_run_again(store):
    """The same race on the tick: it claims two of ten tasks and leaves eight waiting; one of the two ends before
    the mark is written and claims nothing. The tick, whose write set the mark, schedules the run once more and
    claims into the freed slot instead of leaving it to the next tick."""
    dag = DAG("tickrace", schedule=None, start_date=START, max_active_tasks=2)
    with dag:
        for i in range(10):
            task(lambda: None, task_id=f"t{i}")()
    clock = Clock()
    store_dags(store, dag, now=clock())
    trigger_dag(store, dag.dag_id, now=clock(), run_id="r")
    scheduler, executor = scheduler_for(store, clock, parallelism=128)
    other, _ = scheduler_for(store, clock, parallelism=128)
    elsewhere = LambdaWorkers(store, other, executor, clock)
    mark, ended = store.mark_waiting, []

    def a_try_ends_first(dag_id, run_id):
        if not ended:
            ended.append(elsewhere.run_one(executor.take()[0]))
        return mark(dag_id, run_id)

    with mock.patch.object(store, "mark_waiting", side_effect=a_try_ends_first):
        report = scheduler.run_pass()
    states = collections.Counter(ti.state for ti in store.get_run_tis("tickrace", "r"))
    assert ended == [True]
    assert states[TaskInstanceState.SUCCESS] == 1 and states[TaskInstanceState.QUEUED] == 2
    assert len(report.dispatched) == 3  # the two claimed first, and the one claimed into the freed slot


def test_only_the_write_that_sets_a_mark_where_there_was_none_is_told_so(store):
    workers = _started(store, _mapped("marks", 1, leaf=True))
    assert workers is not None
    assert store.mark_waiting("marks", "r") is True
    assert store.mark_waiting("marks", "r") is False  # marked already: whoever set it looks again
    token = store.get_run_meta_and_tis("marks", "r", ())[3].waiting
    assert token is not None and store.clear_waiting("marks", "r", token)
    assert store.mark_waiting("marks", "r") is True


def test_of_the_ends_that_find_nothing_waiting_under_one_mark_one_reads_the_run(store):
    """Eight tries end together after the run's last waiting instance was claimed: each read the run's mark (played
    here by counts that return the mark as it was before the first end), and each finds the index empty. One of
    them, the one whose conditional clear of the mark lands, reads the run whole; the others leave it to that one,
    whose read follows their releases. Only the last instance's end reads the run again: its task's count is
    complete. Before, each of the eight read the run whole."""
    workers = _started(store, _mapped("emptied", 8, leaf=True, max_active_tasks=8))
    assert store.mark_waiting("emptied", "r")  # left by a pass: nothing waits now
    mark = store.get_run_meta_and_tis("emptied", "r", ())[3].waiting
    count = store.count_ends

    def as_before(dag_id, run_id, counted, **kwargs):
        return dataclasses.replace(count(dag_id, run_id, counted, **kwargs), waiting=mark)

    with mock.patch.object(store, "count_ends", as_before), \
            mock.patch.object(workers.scheduler, "schedule_run", wraps=workers.scheduler.schedule_run) as looks:
        for item in workers.executor.take():
            assert workers.run_one(item)
    assert looks.call_count == 2  # the end whose clear landed, and the last instance's (its count complete)
    assert store.get_run("emptied", "r").state == DagRunState.SUCCESS
    assert store.get_run_meta_and_tis("emptied", "r", ())[3].waiting is None


def test_an_end_that_finds_nothing_under_a_mark_set_again_leaves_the_run_to_the_pass_that_set_it(store):
    """A pass left an instance waiting and marked the run again after the end read the mark: the end's clear of
    the mark it read does not land, and the pass that set the new mark looks at the run again itself."""
    workers = _started(store, _mapped("remarked", 4, leaf=True, max_active_tasks=4))
    assert store.mark_waiting("remarked", "r")
    old = store.get_run_meta_and_tis("remarked", "r", ())[3].waiting
    assert store.clear_waiting("remarked", "r", old) and store.mark_waiting("remarked", "r")  # cleared, set again
    count = store.count_ends

    def as_before(dag_id, run_id, counted, **kwargs):
        return dataclasses.replace(count(dag_id, run_id, counted, **kwargs), waiting=old)

    first = workers.executor.take()[0]
    with mock.patch.object(store, "count_ends", as_before), \
            mock.patch.object(workers.scheduler, "schedule_run", wraps=workers.scheduler.schedule_run) as looks:
        assert workers.run_one(first)
    assert looks.call_count == 0
    assert store.get_run_meta_and_tis("remarked", "r", ())[3].waiting not in (None, old)  # the new mark stands


# --------------------------------------------------------------------------------------------------- hand-over
def _counter_frees(store: DynamoStore, *limit_ids: str) -> dict[str, tuple[int, ...]]:
    return {limit_id: counters.read(limits_table(store), limit_id).frees for limit_id in limit_ids}


def test_a_try_claimed_from_waiting_hands_its_slots_to_the_next_with_its_end(store):
    """A try claimed from the waiting instances, or claimed while others of its run were left waiting, ends in one
    transaction with the next one's claim, which takes its ticket's holds: no counter is written, and the end
    sends one transaction instead of two."""
    roomy = _started(store, _mapped("roomy", 2))
    assert not any(item.waited for item in roomy.executor.take())  # nothing of that run waits
    workers = _started(store, _mapped("handed", 6, leaf=True))
    first, second = workers.executor.take()
    assert first.waited and second.waited  # the tick left four waiting
    assert workers.run_one(first)
    (third,) = workers.executor.take()
    assert third.waited and third.key.map_index == 2  # claimed from the waiting ones
    ticket = limits.Ticket.decode(store.get_ti(third.key).ticket)
    limit_ids = (run_tasks_limit("handed", "r"), pool_limit("default_pool"), "parallelism")
    before = _counter_frees(store, *limit_ids)
    with dynamo_requests() as sent:
        assert workers.run_one(third)
    assert operations(sent).count("TransactWriteItems") == 1  # the end and the next claim together
    assert _counter_frees(store, *limit_ids) == before  # not one counter written
    (fourth,) = workers.executor.take()
    assert fourth.key.map_index == 3 and fourth.waited
    assert store.get_ti(third.key).state == TaskInstanceState.SUCCESS and store.get_ti(third.key).ticket is None
    assert limits.Ticket.decode(store.get_ti(fourth.key).ticket).holds == ticket.holds
    assert workers.run_one(second) and workers.run_one(fourth)
    while items := workers.executor.take():
        for item in items:
            assert workers.run_one(item)
    assert store.get_run("handed", "r").state == DagRunState.SUCCESS
    assert held_slots(store, run_tasks_limit("handed", "r")) == 0
    assert not [ti.key for ti in store.get_run_tis("handed", "r") if ti.ticket]  # every slot back


def test_a_shrunk_limits_excess_is_given_back_not_handed_over(store):
    """A limit shrunk below what its holders hold admits nothing until they are under it (PROTOCOL.md, invariant
    1): a try ending on a shard over its share releases its slots instead of handing them over."""
    shrunk = make_store("hand-over-shrunk")
    shrunk.set_pool("default_pool", 2)
    workers = _started(shrunk, _mapped("shrunk", 6, leaf=True, max_active_tasks=8))
    first, second = workers.executor.take()
    assert workers.run_one(first)
    (third,) = workers.executor.take()
    assert third.waited and held_slots(shrunk, pool_limit("default_pool")) == 2
    shrunk.set_pool("default_pool", 1)
    assert limits.resize(limits_table(shrunk), pool_limit("default_pool"), 1)
    workers.scheduler.claims._pool_sizes.clear()  # (the pass's 10 s memory of the old size)
    with mock.patch.object(limits, "hand_over", wraps=limits.hand_over) as handed:
        assert workers.run_one(third)
    assert not handed.called and workers.executor.take() == []  # released, and nothing fits under the new size
    assert held_slots(shrunk, pool_limit("default_pool")) == 1
    assert workers.run_one(second)
    (fourth,) = workers.executor.take()  # back under the size: one slot, one try
    assert fourth.key.map_index == 3 and held_slots(shrunk, pool_limit("default_pool")) == 1


def test_a_try_ended_elsewhere_meanwhile_hands_nothing_over(store):
    """The end's write is refused (the reaper failed the try meanwhile, giving its slots back): the hand-over
    changes nothing, the waiting instance is claimed as any other, once, and the try stays as the reaper left it."""
    workers = _started(store, _mapped("reaped", 6, leaf=True))
    first, _ = workers.executor.take()
    assert workers.run_one(first)
    (third,) = workers.executor.take()

    def reaped_meanwhile(item):
        ti = store.get_ti(item.key)
        assert transition_releasing(store, ti, expected=[TaskInstanceState.RUNNING], state=TaskInstanceState.FAILED,
                                    expected_try_id=item.try_id, fields={})
        return TryResult(TaskInstanceState.SUCCESS)

    workers.outcome = reaped_meanwhile
    assert workers.run_one(third)
    assert store.get_ti(third.key).state == TaskInstanceState.FAILED
    claimed = workers.executor.take()
    assert [item.key.map_index for item in claimed] == [3]
    assert held_slots(store, run_tasks_limit("reaped", "r")) == 2


def test_a_hand_over_lost_to_another_end_goes_to_the_next_waiting_instance(store):
    """Ends that end together read the same hits: one whose first hand-over meets an instance another end took
    meanwhile (nothing lands) hands over to the next hit, not falling back to a release and a claim."""
    workers = _started(store, _mapped("raced", 6, leaf=True))
    _, second = workers.executor.take()
    assert workers.run_one(second)
    (third,) = workers.executor.take()
    read_run = store.read_run

    def raced(dag_id, run_id, ti_keys, **kwargs):
        read = read_run(dag_id, run_id, ti_keys, **kwargs)
        # another end takes the best waiting instance between this read and the hand-over
        assert store.queue_ti(TIKey("raced", "r", "work", 3), expected=TaskInstanceState.SCHEDULED,
                              fields={"try_id": "another", "try_number": 1})
        return read

    with mock.patch.object(store, "read_run", raced), dynamo_requests() as sent:
        assert workers.run_one(third)
    assert operations(sent).count("TransactWriteItems") == 2  # the hand-over lost, then the one that landed
    (fourth,) = workers.executor.take()
    assert fourth.key.map_index == 4 and store.get_ti(fourth.key).ticket
    assert store.get_ti(third.key).state == TaskInstanceState.SUCCESS and store.get_ti(third.key).ticket is None
    assert held_slots(store, run_tasks_limit("raced", "r")) == 2


def test_an_end_whose_hand_over_found_nothing_waiting_does_not_list_the_index_again(store):
    workers = _started(store, _mapped("tail", 3, leaf=True))
    first, second = workers.executor.take()
    assert workers.run_one(first)  # handed to the last waiting instance
    (last,) = workers.executor.take()
    workers.executor.dispatch([second])
    sent, _, whole = _one_end(store, workers)
    # its hand-over listed the index (empty), then it released, counted, cleared the mark it read and read the run
    # whole (``_look_once``): the index listed once, before the release, not again after it
    release = sent.index("TransactWriteItems")
    assert sent[:release].count("Query") == 1 and "Query" not in sent[release:sent.index("BatchGetItem")]
    assert whole == 1
    assert store.get_ti(second.key).state == TaskInstanceState.SUCCESS
    assert workers.run_one(last) and store.get_run("tail", "r").state == DagRunState.SUCCESS


def test_a_hand_over_needs_no_waiting_mark(store):
    """A wave's tries can end before the pass that left the others waiting has marked the run (a fan-out's no-op
    first wave): the mark tells an end that frees slots to look; a hand-over frees none, and an instance the index
    lists and the strong read finds scheduled waits."""
    workers = _started(store, _mapped("unmarked", 5, leaf=True))
    first, _ = workers.executor.take()
    mark = store.get_run_meta_and_tis("unmarked", "r", ())[3].waiting
    assert mark and store.clear_waiting("unmarked", "r", mark)
    with dynamo_requests() as sent:
        assert workers.run_one(first)
    assert operations(sent).count("TransactWriteItems") == 1
    (claimed,) = workers.executor.take()
    assert claimed.key.map_index == 2 and store.get_ti(claimed.key).ticket
