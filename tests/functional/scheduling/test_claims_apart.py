"""Concurrent schedulers claim apart: a pass walks the ready instances by bucket from its own starting bucket, and
a race lost in a bucket leaves the rest of it to the scheduler met there (its claim took nothing); a try that
ends up_for_reschedule gives its slots back with its ticket."""

from __future__ import annotations

import datetime as dt
import json
from unittest import mock

import pytest
from botocore.client import BaseClient

from airflow.sdk import DAG, task
from tests.functional.scheduling.harness import START, scheduler_for, store_dags
from updraft.limits import Contended, Table, Ticket, room
from updraft.model.limits import DEFAULT_POOL_SLOTS, PARALLELISM_LIMIT, pool_limit
from updraft.model.states import TaskInstanceState
from updraft.scheduling.claim_pass import BUCKETS, bucket_of, spread_ties
from updraft.scheduling.commands.triggering import trigger_dag
from updraft.scheduling.holding import held_limit_ids, limits_table
from updraft.scheduling.try_lifecycle import NextHop, TryResult, finish_try, next_hop, start_try

WIDTH = 12


def _wide_run(store, clock, scheduler):
    """A run of WIDTH independent tasks, all scheduled and none claimed (their pool had no slot at the pass)."""
    with DAG("apart", schedule=None, start_date=START, max_active_tasks=WIDTH) as dag:
        for i in range(WIDTH):
            task(lambda: None, task_id=f"t{i:02d}", pool="apart")()
    store.set_pool("apart", 0)
    store_dags(store, dag, now=clock())
    run = trigger_dag(store, "apart", now=clock())
    scheduler.run_pass()
    store.set_pool("apart", WIDTH)
    tis = store.get_run_tis("apart", run.run_id)
    assert {ti.state for ti in tis} == {TaskInstanceState.SCHEDULED} and len(tis) == WIDTH
    return store.get_run("apart", run.run_id), tis


def test_each_start_walks_every_bucket_once_from_its_own(env):
    store, clock, scheduler, _ = env
    run, tis = _wide_run(store, clock, scheduler)
    runs = {(run.dag_id, run.run_id): run}
    for start in (0, 5, BUCKETS - 1):
        ordered = spread_ties(tis, runs, start)
        assert sorted(ti.key.label for ti in ordered) == sorted(ti.key.label for ti in tis)
        buckets = [(bucket_of(ti) - start) % BUCKETS for ti in ordered]
        assert buckets == sorted(buckets)  # from its start onward, wrapping, each bucket once


@pytest.fixture
def sensor_dag():
    with DAG("poke", schedule=None, start_date=START) as dag:
        task(lambda: None, task_id="wait")()
    return dag


def test_a_try_ended_up_for_reschedule_holds_no_ticket_and_its_slots_are_free(env, sensor_dag):
    store, clock, scheduler, executor = env
    store_dags(store, sensor_dag, now=clock())
    run = trigger_dag(store, "poke", now=clock())
    scheduler.run_pass()
    [poke] = executor.take()
    table = limits_table(store)
    held = Ticket.decode(store.get_ti(poke.key).ticket)  # the claim carries what it took
    assert set(held.limit_ids) >= {PARALLELISM_LIMIT, pool_limit("default_pool")}
    assert room(table, PARALLELISM_LIMIT) == scheduler.config.parallelism - 1
    assert start_try(store, poke.key, poke.try_id, now=clock())
    result = TryResult(TaskInstanceState.UP_FOR_RESCHEDULE, reschedule_date=clock() + dt.timedelta(minutes=1))
    assert finish_try(store, poke.key, poke.try_id, result, now=clock(), dag=scheduler.dag("poke", run.dag_hash))
    ended = store.get_ti(poke.key)
    assert ended.state == TaskInstanceState.UP_FOR_RESCHEDULE
    assert ended.ticket is None
    assert room(table, PARALLELISM_LIMIT) == scheduler.config.parallelism
    assert room(table, pool_limit("default_pool")) == DEFAULT_POOL_SLOTS


def _claimed_by_another_at_the_claim(store, first):
    """Another scheduler queues ``first`` just before this pass's claim of it lands."""
    original = store.transition_item

    def transition_item(key, **kwargs):
        if key == first.key and original.__self__.get_ti(key).state == TaskInstanceState.SCHEDULED:
            assert store.queue_ti(key, expected=TaskInstanceState.SCHEDULED,
                                  fields={"try_number": first.try_number + 1, "try_id": "other"})
        return original(key, **kwargs)

    store.transition_item = transition_item


@pytest.fixture
def first_bucket(monkeypatch):
    """Passes start at bucket 0: which instance a pass claims first is known."""
    monkeypatch.setattr("updraft.scheduling.claim_pass.random.randrange", lambda n: 0)


def _first(tis, run):
    return spread_ties(tis, {(run.dag_id, run.run_id): run}, 0)[0]


def test_a_try_claimed_by_another_is_a_race_lost_that_takes_nothing_and_the_pass_goes_on(env, first_bucket):
    store, clock, scheduler, _ = env
    run, tis = _wide_run(store, clock, scheduler)
    first = _first(tis, run)
    _claimed_by_another_at_the_claim(store, first)
    report = scheduler_for(store, clock)[0].run_pass()  # (a new one: the first remembers the pool's 0 slots)
    # The lost claim left its bucket to the other scheduler; the other buckets were claimed.
    claimed = {d.key for d in report.dispatched}
    assert first.key not in claimed and first.key.label not in report.not_claimed
    assert claimed and all(bucket_of(ti) != bucket_of(first) for ti in tis if ti.key in claimed)
    assert store.get_ti(first.key).try_id == "other"  # the other scheduler's claim stands
    assert room(limits_table(store), pool_limit("apart")) == WIDTH - len(claimed)  # the lost claim took nothing


def test_an_ended_try_tells_the_worker_what_it_gave_back_so_a_named_pool_goes_first(env):
    """finish_try's answer names the limits the end gave back (the ticket as held while running), which the worker
    needs: a try that held a named pool hands its run on after its release (``next_hop``), and an end whose limit
    kept a task waiting schedules the run again (``waiting_claims``)."""
    store, clock, scheduler, executor = env
    with DAG("named", schedule=None, start_date=START) as dag:
        task(lambda: None, task_id="solo", pool="named")() >> task(lambda: None, task_id="next")()
    store.set_pool("named", 1)
    store_dags(store, dag, now=clock())
    run = trigger_dag(store, "named", now=clock())
    scheduler.run_pass()
    [solo] = executor.take()
    serialized = scheduler.dag("named", run.dag_hash)
    assert start_try(store, solo.key, solo.try_id, now=clock())
    finished = finish_try(store, solo.key, solo.try_id, TryResult(TaskInstanceState.SUCCESS), now=clock(),
                          dag=serialized)
    assert finished and finished.state == TaskInstanceState.SUCCESS
    assert pool_limit("named") in held_limit_ids(finished)
    assert next_hop(serialized, "solo", finished) is NextHop.HAND_OFF
    assert store.get_ti(solo.key).ticket is None  # stored: released with the end
    assert room(limits_table(store), pool_limit("named")) == 1


def test_a_claim_contended_on_every_attempt_is_left_to_a_later_pass(env, monkeypatch, sensor_dag):
    """Counters held by other transactions on every attempt (``Contended``) fail no pass and poison no run: the
    run's start, its claims and the parallelism's sizing are left to a later pass, which starts and claims it."""
    store, clock, scheduler, executor = env
    store_dags(store, sensor_dag, now=clock())
    run = trigger_dag(store, "poke", now=clock())
    real = Table.transact

    def contended(self, items):
        raise Contended("held on every attempt")

    monkeypatch.setattr(Table, "transact", contended)
    report = scheduler.run_pass()
    assert not report.dispatched and executor.take() == [] and report.poisoned == {}
    assert store.get_run("poke", run.run_id).note is None
    assert all(ti.state == TaskInstanceState.SCHEDULED for ti in store.get_run_tis("poke", run.run_id))
    monkeypatch.setattr(Table, "transact", real)
    scheduler.run_pass()
    assert [d.key.task_id for d in executor.take()] == ["wait"]

    # The run starts, its claim alone is contended.
    run = trigger_dag(store, "poke", now=clock(), run_id="second")

    def claim_contended(self, items):
        if any('"TI#' in str(item) or "'TI#" in str(item) for item in items):
            raise Contended("held on every attempt")
        return real(self, items)

    monkeypatch.setattr(Table, "transact", claim_contended)
    report = scheduler.run_pass()
    assert report.runs_started == ["second"]
    assert not report.dispatched and report.poisoned == {}
    monkeypatch.setattr(Table, "transact", real)
    scheduler.run_pass()
    assert [d.key.run_id for d in executor.take()] == [run.run_id]


def test_a_batch_that_meets_a_try_claimed_by_another_claims_the_rest_together(env, first_bucket):
    """One transaction claims the run's tries; another scheduler queued one of them just before it landed: the
    transaction changes nothing, and the rest go together in one more, not one transaction each."""
    store, clock, scheduler, _ = env
    run, tis = _wide_run(store, clock, scheduler)
    taken = spread_ties(tis, {(run.dag_id, run.run_id): run}, 0)[1]  # inside the pass's first batch
    _claimed_by_another_at_the_claim(store, taken)
    fresh = scheduler_for(store, clock)[0]  # (the first remembers the pool's 0 slots)
    sent: list[int] = []  # each claim transaction's number of task instances
    real = BaseClient._make_api_call

    def call(client, operation, params):
        if operation == "TransactWriteItems":
            sent.append(sum('"TI#' in json.dumps(item) for item in params["TransactItems"]))
        return real(client, operation, params)

    with mock.patch.object(BaseClient, "_make_api_call", call):
        report = fresh.run_pass()
    assert {d.key for d in report.dispatched} == {ti.key for ti in tis} - {taken.key}
    assert store.get_ti(taken.key).try_id == "other"
    assert taken.key.label not in report.not_claimed
    # The batch of 12 met the other's claim; the 11 others went together (again once the limits were created).
    assert [n for n in sent if n] == [WIDTH, WIDTH - 1, WIDTH - 1]
    assert room(limits_table(store), pool_limit("apart")) == 1  # the lost claim took nothing


def test_a_claim_contended_in_the_mini_scheduler_is_claimed_from_a_second_read(env, monkeypatch):
    """An end's mini scheduler whose claim met other transactions on every attempt refuses them as waiting: they
    are created scheduled, the run is marked, and the pass whose write set the mark reads the run again and claims
    them. Left as a lost race they were left to the tick (not even created, and no mark to send an end to them)."""
    store, clock, scheduler, executor = env
    with DAG("contended", schedule=None, start_date=START) as dag:
        first = task(lambda: None, task_id="first")()
        for i in range(3):
            first >> task(lambda: None, task_id=f"m{i}")()
    store_dags(store, dag, now=clock())
    run = trigger_dag(store, "contended", now=clock())
    scheduler.run_pass()
    (root,) = executor.take()
    started = start_try(store, root.key, root.try_id, now=clock())
    assert finish_try(store, root.key, root.try_id, TryResult(TaskInstanceState.SUCCESS), now=clock(),
                      dag=scheduler.dag("contended", run.dag_hash), started=started)
    real, refused = Table.transact, []

    def once_contended(self, items):
        if not refused and any("TI#" in str(item) for item in items):
            refused.append(len(items))
            raise Contended("held on every attempt")
        return real(self, items)

    monkeypatch.setattr(Table, "transact", once_contended)
    scheduler.schedule_run("contended", run.run_id)
    assert refused
    assert sorted(d.key.task_id for d in executor.take()) == ["m0", "m1", "m2"]
