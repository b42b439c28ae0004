"""Slot hand-over (issue 19): a worker's mini scheduler hands the ended try's slots to the next try it claims
without writing the limits (the entry stays under the ended try's id, the new try's queue write says it holds it),
instead of a take and a release per limit; sharded limits too. A lost queue race gives the slots back to the
donor, a run waiting on a full limit is claimed by the end that frees its slot at once, and reconciliation keeps a
handed-on entry while its try runs (or a hand-over may be in flight) and returns it once nobody holds it.

Workers are played as the worker Lambda plays them (``LambdaWorkers``: ``report_try``)."""

from __future__ import annotations

import collections
import itertools
from collections.abc import Iterator
from types import SimpleNamespace
from unittest import mock

import pytest
from moto import mock_aws

from airflow.sdk import DAG, task
from tests.dynamo_requests import Request, dynamo_requests
from tests.functional.scheduling.harness import START, Clock, LambdaWorkers, make_store, scheduler_for, store_dags
from updraft.api.routes.pools import pool_response
from updraft.model.limits import DEFAULT_POOL, PARALLELISM_LIMIT, pool_limit, run_tasks_limit
from updraft.model.records import TIKey
from updraft.model.states import DagRunState, TaskInstanceState
from updraft.scheduling.reconcile import reconcile_limits
from updraft.scheduling.triggering import trigger_dag
from updraft.scheduling.try_lifecycle import TryResult, finish_try, start_try
from updraft.store.dynamo import DynamoStore

NOW = START


@pytest.fixture(scope="module")
def store() -> Iterator[DynamoStore]:
    with mock_aws():
        yield make_store("slot-handover")


def limit_writes(sent: list[Request]) -> collections.Counter[str]:
    """Writes of limit items among ``sent``, by limit (root and shard items), the operation ignored."""
    return collections.Counter(request.pk.removeprefix("LIMIT#").split("#")[0] for request in sent
                               if request.operation in ("UpdateItem", "PutItem", "DeleteItem")
                               and request.pk.startswith("LIMIT#"))


def _dag(dag_id: str, *, chain: int = 2, extra: str | None = None, **dag_kwargs) -> DAG:
    """A chain of ``chain`` tasks t0 >> t1 >> ..., and ``extra`` beside it."""
    dag = DAG(dag_id, schedule=None, start_date=START, **dag_kwargs)

    @task(dag=dag)
    def work():
        return None

    with dag:
        tasks = [work.override(task_id=f"t{i}")() for i in range(chain)]
        for upstream, downstream in itertools.pairwise(tasks):
            upstream >> downstream
        if extra is not None:
            work.override(task_id=extra)()
    return dag


def _start(store: DynamoStore, dag: DAG) -> tuple[LambdaWorkers, Clock]:
    """The DAG stored and triggered, and one tick: its run started and its first tasks claimed."""
    clock = Clock()
    store_dags(store, dag, now=clock())
    trigger_dag(store, dag.dag_id, now=clock(), run_id="r")
    scheduler, executor = scheduler_for(store, clock, parallelism=128)
    scheduler.run_pass()
    return LambdaWorkers(store, scheduler, executor, clock), clock


def _holders(store: DynamoStore, limit_id: str, dag_id: str | None = None) -> set[str]:
    """The limit's entries (only ``dag_id``'s: the tests share the pool and parallelism)."""
    state = store.get_limit(limit_id)
    return {entry for entry in (state.holders if state else ()) if dag_id is None or entry.startswith(f"{dag_id}|")}


def _tries(dag_id: str, *task_ids: str) -> set[str]:
    return {TIKey(dag_id, "r", task_id).holder(1) for task_id in task_ids}


def _limits(dag_id: str) -> list[str]:
    return [pool_limit(DEFAULT_POOL), run_tasks_limit(dag_id, "r"), PARALLELISM_LIMIT]


def _entries(store: DynamoStore, dag_id: str, task_id: str) -> dict[str, str]:
    return store.get_ti(TIKey(dag_id, "r", task_id)).limit_entries


def test_a_chain_hop_writes_no_limit(store):
    workers, _ = _start(store, _dag("hop", chain=3))
    (first,) = workers.executor.take()
    with dynamo_requests() as sent:
        assert workers.run_one(first)
    # Was 6 writes per limit pair (the next task's take and this try's release), then 1 (a transfer).
    assert dict(limit_writes(sent)) == {}
    assert [d.key.task_id for d in workers.executor.dispatched] == ["t1"]
    (t0,) = _tries("hop", "t0")
    assert _entries(store, "hop", "t1") == {limit_id: t0 for limit_id in _limits("hop")}
    for limit_id in _limits("hop"):
        assert _holders(store, limit_id) == {t0}, limit_id  # the entry stays, under t0's id
    with dynamo_requests() as sent:
        assert workers.drain() == 2
    # t2's release, once each, and the run's own slot of max_active_runs as it ends
    assert dict(limit_writes(sent)) == {**{limit_id: 1 for limit_id in _limits("hop")}, "dag_runs:hop": 1}
    assert _entries(store, "hop", "t2") == {limit_id: t0 for limit_id in _limits("hop")}  # passed on again
    assert store.get_run("hop", "r").state == DagRunState.SUCCESS
    for limit_id in _limits("hop"):
        assert _holders(store, limit_id) == set(), limit_id


def test_a_queue_race_lost_after_a_hand_over_gives_the_slots_back(store):
    workers, _ = _start(store, _dag("lost"))
    (first,) = workers.executor.take()
    queue_ti = store.queue_ti
    calls = []

    def lose_once(*args, **kwargs):  # t1's first queueing loses (as to another scheduler), the look after wins
        calls.append(args)
        return len(calls) > 1 and queue_ti(*args, **kwargs)

    with mock.patch.object(store, "queue_ti", side_effect=lose_once), dynamo_requests() as sent:
        assert workers.run_one(first)
    assert len(calls) == 2
    # The slots went back to the donor with the lost race and were handed on again by the look after.
    assert dict(limit_writes(sent)) == {}
    (t0,) = _tries("lost", "t0")
    assert _entries(store, "lost", "t1") == {limit_id: t0 for limit_id in _limits("lost")}
    for limit_id in _limits("lost"):
        assert _holders(store, limit_id) == {t0}, limit_id  # held once
    assert workers.drain() == 1
    assert store.get_run("lost", "r").state == DagRunState.SUCCESS
    for limit_id in _limits("lost"):
        assert _holders(store, limit_id) == set(), limit_id


def test_a_queue_race_lost_to_another_scheduler_leaves_the_slots_to_the_donors_release(store):
    workers, clock = _start(store, _dag("gone"))
    (first,) = workers.executor.take()
    other, other_executor = scheduler_for(store, clock, parallelism=128)
    queue_ti = store.queue_ti
    raced = []

    def race(*args, **kwargs):  # another scheduler claims t1 (its own takes) just before the hop's queueing
        if not raced:
            raced.append(True)
            other.schedule_run("gone", "r")
        return queue_ti(*args, **kwargs)

    with mock.patch.object(store, "queue_ti", side_effect=race):
        assert workers.run_one(first)
    assert workers.executor.dispatched == []
    (t1,) = other_executor.take()
    for limit_id in _limits("gone"):
        assert _holders(store, limit_id) == {t1.key.holder(1)}, limit_id  # the donor released what came back
    assert _entries(store, "gone", "t1") == {}
    workers.executor.dispatched.append(t1)
    assert workers.drain() == 1


def test_a_sharded_limit_is_handed_on_with_its_shard(store):
    run_tasks = run_tasks_limit("sharded", "r")
    others = [f"other|{n}" for n in range(6)]  # more holders than a root takes: the limit spreads over shards
    for holder in others:
        assert store.take_slots(run_tasks, holder, 1, limit=40, now=NOW)
    workers, _ = _start(store, _dag("sharded", max_active_tasks=40))
    (first,) = workers.executor.take()
    placed = store.get_ti(first.key).limit_shards
    with dynamo_requests() as sent:
        assert workers.run_one(first)
    assert dict(limit_writes(sent)) == {}
    t1 = store.get_ti(TIKey("sharded", "r", "t1"))
    assert t1.limit_shards == placed  # where t0's entry sits: t1's release writes there
    (t0,) = _tries("sharded", "t0")
    assert _holders(store, run_tasks) == set(others) | {t0}
    with dynamo_requests() as sent:
        assert workers.drain() == 1
    assert limit_writes(sent)[run_tasks] <= 2  # the entry's shard and its marker, no search
    assert _holders(store, run_tasks) == set(others)


def test_a_try_needing_more_pool_slots_takes_its_own(store):
    dag = DAG("wider", schedule=None, start_date=START)

    @task(dag=dag)
    def work():
        return None

    with dag:
        work.override(task_id="t0")() >> work.override(task_id="t1", pool_slots=2)()
    workers, _ = _start(store, dag)
    (first,) = workers.executor.take()
    assert workers.run_one(first)
    (t0,) = _tries("wider", "t0")
    (t1,) = _tries("wider", "t1")
    held = store.get_limit(pool_limit(DEFAULT_POOL)).holders
    assert (held.get(t1), t0 in held) == (2, False)  # its own take; t0's slot released
    assert _entries(store, "wider", "t1") == {run_tasks_limit("wider", "r"): t0, PARALLELISM_LIMIT: t0}
    assert workers.drain() == 1
    assert not _holders(store, pool_limit(DEFAULT_POOL)) & {t0, t1}


def test_the_end_that_frees_a_full_limits_slot_claims_its_waiter_in_one_look(store):
    # t0 >> t1, and t2 beside them; one task at a time: the tick claims t0 (the higher priority), t2 waits.
    workers, _ = _start(store, _dag("waiting", max_active_tasks=1, extra="t2"))
    (first,) = workers.executor.take()
    assert first.key.task_id == "t0"
    with mock.patch.object(workers.scheduler, "schedule_run", wraps=workers.scheduler.schedule_run) as looks, \
            dynamo_requests() as sent:
        assert workers.run_one(first)
    # Before: a look whose claims the full limit refused (t0 still held its slot), the release, a second look.
    assert looks.call_count == 1
    assert limit_writes(sent)[run_tasks_limit("waiting", "r")] == 0
    (next_try,) = workers.executor.take()
    assert _holders(store, run_tasks_limit("waiting", "r")) == _tries("waiting", "t0")
    assert store.get_ti(next_try.key).entry(run_tasks_limit("waiting", "r")) == first.key.holder(1)
    workers.executor.dispatched.append(next_try)
    assert workers.drain() == 2
    assert store.get_run("waiting", "r").state == DagRunState.SUCCESS
    assert _holders(store, run_tasks_limit("waiting", "r")) == set()


def test_reconciliation_keeps_a_handed_on_entry_while_its_try_holds_it(store):
    workers, clock = _start(store, _dag("kept", chain=3))
    (first,) = workers.executor.take()
    assert workers.run_one(first)  # t1 queued, holding t0's entries
    (t1,) = workers.executor.take()
    clock.advance(minutes=30)  # far past the claim grace: the entries are old, t0 ended long ago
    assert reconcile_limits(store, _limits("kept"), now=clock()) == 0
    assert start_try(store, t1.key, t1.try_id, now=clock())  # running now
    assert reconcile_limits(store, _limits("kept"), now=clock()) == 0
    (t0,) = _tries("kept", "t0")
    for limit_id in _limits("kept"):
        assert _holders(store, limit_id, "kept") == {t0}, limit_id


def test_reconciliation_returns_a_handed_on_entry_nobody_holds(store):
    workers, clock = _start(store, _dag("leaked", chain=3))
    (first,) = workers.executor.take()
    assert workers.run_one(first)
    (t1,) = workers.executor.take()
    assert start_try(store, t1.key, t1.try_id, now=clock())
    # t1 ends, and its worker dies before it releases or hands anything on.
    run = store.get_run("leaked", "r")
    finish_try(store, t1.key, t1.try_id, TryResult(TaskInstanceState.SUCCESS), now=clock(),
               dag=workers.scheduler.dag(run.dag_id, run.dag_hash), release=False)
    clock.advance(seconds=30)  # t1 may still be handing its slots on: kept
    assert reconcile_limits(store, _limits("leaked"), now=clock()) == 0
    clock.advance(seconds=31)
    assert reconcile_limits(store, _limits("leaked"), now=clock()) == 3
    for limit_id in _limits("leaked"):
        assert _holders(store, limit_id, "leaked") == set(), limit_id


def test_a_pool_counts_a_handed_on_slot_by_its_new_try(store):
    workers, clock = _start(store, _dag("counted", chain=3))
    first = next(d for d in workers.executor.take() if d.key.dag_id == "counted")  # (another test's run too)
    assert workers.run_one(first)
    (t1,) = workers.executor.take()

    def slots() -> tuple[int, int]:
        counts = pool_response(SimpleNamespace(store=store), store.get_pool(DEFAULT_POOL))
        return counts["running_slots"], counts["queued_slots"]

    running, queued = slots()  # t1 queued under t0's entry (and the other tests' tries)
    assert start_try(store, t1.key, t1.try_id, now=clock())
    assert slots() == (running + 1, queued - 1)
