"""Whole runs through the scheduler, the claim protocol and fenced completions, on moto's DynamoDB."""

from __future__ import annotations

import datetime as dt

import pytest
from moto import mock_aws

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG, task
from tests.dynamo_requests import dynamo_requests
from tests.functional.scheduling.harness import START, Clock, Workers, key, make_store, scheduler_for, store_dags
from updraft.model.states import DagRunState, TaskInstanceState
from updraft.scheduling.commands.dag_registration import set_paused
from updraft.scheduling.commands.triggering import trigger_dag
from updraft.scheduling.try_lifecycle import TryResult

S = TaskInstanceState


def _chain_dag(dag_id="chain", n=3, **task_kwargs):
    with DAG(dag_id, schedule=None, start_date=START) as dag:

        @task(**task_kwargs)
        def step():
            return None

        prev = None
        for i in range(n):
            cur = step.override(task_id=f"t{i}")()
            if prev is not None:
                prev >> cur
            prev = cur
    return dag


def test_a_chain_runs_to_success_and_each_hop_is_dispatched_by_the_mini_scheduler(env):
    store, clock, scheduler, executor = env
    store_dags(store, _chain_dag(), now=clock())
    run = trigger_dag(store, "chain", now=clock())
    scheduler.run_pass()
    [first] = executor.take()
    assert first.key == key("chain", run.run_id, "t0") and first.try_number == 1

    workers = Workers(store, scheduler, executor, clock)
    workers.run_one(first)
    # No tick in between: finishing t0 dispatched t1 at once.
    [second] = executor.dispatched
    assert second.key.task_id == "t1"

    finished = workers.run_to_end("chain", run.run_id)
    assert finished.state == DagRunState.SUCCESS
    assert workers.states("chain", run.run_id) == {"t0": "success", "t1": "success", "t2": "success"}
    assert all(ti.try_number == 1 for ti in store.get_run_tis("chain", run.run_id))


def test_a_new_instance_is_created_by_its_claim_in_one_write_or_as_scheduled_when_it_cannot_be_claimed(env):
    store, clock, scheduler, executor = env
    with DAG("pair", schedule=None, start_date=START) as dag:
        task(lambda: None, task_id="blocked", pool="nowhere")()  # no such pool: it cannot be claimed
        task(lambda: None, task_id="free")()
    store_dags(store, dag, now=clock())
    run = trigger_dag(store, "pair", now=clock())
    writes: list[tuple[str, object, object]] = []
    original, original_item = store.transition_ti, store.transition_item

    def spy(key, *, expected, state, **kwargs):
        writes.append((key.task_id, tuple(expected), state))
        return original(key, expected=expected, state=state, **kwargs)

    def spy_item(key, *, expected, state, **kwargs):  # a claim's write, sent in its transaction
        writes.append((key.task_id, tuple(expected), state))
        return original_item(key, expected=expected, state=state, **kwargs)

    store.transition_ti, store.transition_item = spy, spy_item
    report = scheduler.run_pass()
    [claimed] = executor.take()
    assert claimed.key.task_id == "free" and [d.key for d in report.dispatched] == [claimed.key]
    # Created by its claim (a first round may meet the limits not created yet: the same write, sent again).
    assert {w for w in writes if w[0] == "free"} == {("free", (None,), S.QUEUED)}
    assert [w for w in writes if w[0] == "blocked"] == [("blocked", (None,), S.SCHEDULED)]
    states = {ti.key.task_id: ti.state for ti in store.get_run_tis("pair", run.run_id)}
    assert states == {"free": S.QUEUED, "blocked": S.SCHEDULED}
    assert any("pool 'nowhere' does not exist" in why for why in report.not_claimed.values())


def test_a_failed_try_waits_for_its_retry_delay_then_runs_again(env):
    store, clock, scheduler, executor = env
    store_dags(store, _chain_dag(n=1, retries=1, retry_delay=dt.timedelta(seconds=60)), now=clock())
    run = trigger_dag(store, "chain", now=clock())
    tries = []

    def outcome(item):
        tries.append(item.try_number)
        return TryResult(S.FAILED if item.try_number == 1 else S.SUCCESS)

    workers = Workers(store, scheduler, executor, clock, outcome=outcome)
    scheduler.run_pass()
    workers.drain()
    assert workers.states("chain", run.run_id) == {"t0": "up_for_retry"}
    clock.advance(seconds=30)
    scheduler.run_pass()
    assert executor.dispatched == []  # still inside retry_delay
    clock.advance(seconds=31)
    assert workers.run_to_end("chain", run.run_id).state == DagRunState.SUCCESS
    assert tries == [1, 2]


def test_a_failure_propagates_upstream_failed_and_all_done_still_runs(env, caplog):
    store, clock, scheduler, executor = env
    with DAG("fails", schedule=None, start_date=START) as dag:

        @task
        def work():
            return None

        a = EmptyOperator(task_id="a")
        b = work.override(task_id="b")()
        c = work.override(task_id="c", trigger_rule="all_done")()
        d = work.override(task_id="d")()
        e = EmptyOperator(task_id="e")
        a >> b >> [c, d]
        d >> e
    store_dags(store, dag, now=clock())
    run = trigger_dag(store, "fails", now=clock())
    workers = Workers(store, scheduler, executor, clock,
                      outcome=lambda item: TryResult(S.FAILED if item.key.task_id == "b" else S.SUCCESS))
    scheduler.run_pass()
    with caplog.at_level("INFO", logger="updraft.scheduling.scheduler"):
        ended = workers.run_to_end("fails", run.run_id)
    # The reason is logged (and given to the DAG's callbacks); the note stays the user's, empty, as in Airflow.
    assert ended.state == DagRunState.FAILED and ended.note is None
    assert f"run {run.run_id} of fails ended failed (task_failure: " in caplog.text
    assert workers.states("fails", run.run_id) == {
        "a": "success", "b": "failed", "c": "success", "d": "upstream_failed", "e": "upstream_failed"}
    tis = {ti.task_id: ti for ti in store.get_run_tis("fails", run.run_id)}
    # Airflow's scheduler finishes EmptyOperators itself and counts that as their try.
    assert tis["a"].try_number == 1 and tis["a"].start_date is not None
    assert tis["d"].try_number == 0 and tis["c"].try_number == 1


def test_pool_that_does_not_exist_is_not_claimed(env):
    store, clock, scheduler, executor = env
    store_dags(store, _chain_dag(n=1, pool="missing"), now=clock())
    run = trigger_dag(store, "chain", now=clock())
    report = scheduler.run_pass()
    assert executor.dispatched == []
    assert "does not exist" in report.not_claimed["t0"]
    assert Workers(store, scheduler, executor, clock).states("chain", run.run_id) == {"t0": "scheduled"}


def _daily(dag_id="daily", **kwargs):
    with DAG(dag_id, schedule="@daily", start_date=START, catchup=True, **kwargs) as dag:
        EmptyOperator(task_id="noop")
    return dag


def test_catchup_creates_each_due_run_once_within_max_active_runs(env):
    store, clock, scheduler, executor = env
    clock.now = START + dt.timedelta(days=3, hours=1)  # runs due at day 0, 1, 2 and 3
    store_dags(store, _daily(max_active_runs=2), now=clock())
    report = scheduler.run_pass()
    assert len(report.runs_created) == 2  # max_active_runs: no more scheduled runs while 2 are active
    workers = Workers(store, scheduler, executor, clock)
    for _ in range(6):
        scheduler.run_pass()
        workers.drain()
    runs = store.list_runs("daily")
    assert sorted(r.logical_date.day for r in runs) == [1, 2, 3, 4]
    assert {r.state for r in runs} == {DagRunState.SUCCESS}
    assert sorted(r.run_id for r in runs)[0] == "scheduled__2024-01-01T00:00:00+00:00"
    meta = store.get_dag_meta("daily")
    assert meta.next_dagrun_logical_date == START + dt.timedelta(days=4)  # not due yet


def test_a_queued_run_counts_against_max_active_runs_before_another_is_created(env):
    """Airflow counts queued and running runs (``active_runs_of_dags(only_running=False)``) before creating."""
    from updraft.scheduling.pass_report import PassReport

    store, clock, scheduler, _ = env
    clock.now = START + dt.timedelta(days=3, hours=1)
    store_dags(store, _daily(max_active_runs=1), now=clock())
    queued = trigger_dag(store, "daily", now=clock())  # queued, not started yet
    report = PassReport()
    scheduler.create_due_runs(report)
    assert report.runs_created == []
    assert [r.run_id for r in store.list_runs("daily")] == [queued.run_id]


@pytest.mark.slow
def test_ticks_take_turns_over_more_active_runs_than_one_loop_examines(env):
    """Old runs still going must not keep newer ones from starting (Airflow orders by last decision)."""
    store, clock, scheduler, executor = env
    with DAG("busy", schedule=None, start_date=START, max_active_runs=30) as dag:
        task(lambda: None, task_id="work")()
    store_dags(store, dag, now=clock())
    runs = [trigger_dag(store, "busy", now=clock(), run_id=f"r{i:02d}") for i in range(25)]
    first = scheduler.run_pass()
    assert len(first.runs_started) == scheduler.config.max_dagruns_per_loop_to_schedule == 20
    second = scheduler.run_pass()
    assert set(first.runs_started) | set(second.runs_started) == {r.run_id for r in runs}
    assert len(executor.take()) == 25


@pytest.mark.slow
def test_racing_schedulers_create_every_scheduled_run_exactly_once(serialized_moto):
    import threading

    with mock_aws():
        store = make_store()
        clock = Clock(START + dt.timedelta(days=5, hours=1))
        store_dags(store, _daily(max_active_runs=16), now=clock())
        reports = []
        schedulers = [scheduler_for(store, clock)[0] for _ in range(8)]
        threads = [threading.Thread(target=lambda s=s: reports.append(s.run_pass())) for s in schedulers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        created = [run_id for r in reports for run_id in r.runs_created]
        runs = store.list_runs("daily")
        assert len(runs) == 6 and sorted(created) == sorted(r.run_id for r in runs)


@pytest.mark.slow
def test_max_active_tis_per_dagrun_caps_a_mapped_task_within_one_run(env):
    store, clock, scheduler, executor = env
    with DAG("mapped", schedule=None, start_date=START) as dag:

        @task(max_active_tis_per_dagrun=2)
        def work(x):
            return x

        work.expand(x=[1, 2, 3, 4, 5])
    store_dags(store, dag, now=clock())
    run = trigger_dag(store, "mapped", now=clock())
    scheduler.run_pass()
    first = executor.take()
    assert len(first) == 2 and len({d.key.map_index for d in first}) == 2  # 5 expanded, 2 may be active
    workers = Workers(store, scheduler, executor, clock)
    executor.dispatched.extend(first)
    assert workers.run_to_end("mapped", run.run_id).state == DagRunState.SUCCESS
    assert len(store.get_run_tis("mapped", run.run_id)) == 5


def test_a_paused_dag_starts_nothing_new_until_unpaused(env):
    store, clock, scheduler, executor = env
    store_dags(store, _chain_dag(n=2), now=clock())
    run = trigger_dag(store, "chain", now=clock())
    scheduler.run_pass()
    [first] = executor.take()
    set_paused(store, "chain", True)
    workers = Workers(store, scheduler, executor, clock)
    workers.run_one(first)  # the running try finishes...
    scheduler.run_pass()
    assert executor.dispatched == []  # ...but nothing new starts while the DAG is paused
    assert workers.states("chain", run.run_id) == {"t0": "success"}
    set_paused(store, "chain", False)
    assert workers.run_to_end("chain", run.run_id).state == DagRunState.SUCCESS


def test_a_run_holding_its_dags_max_active_tasks_asks_no_limit_again(env):
    store, clock, scheduler, executor = env
    with DAG("wide", schedule=None, start_date=START, max_active_tasks=2) as dag:
        for i in range(4):
            task(lambda: None, task_id=f"t{i}")()
    store_dags(store, dag, now=clock())
    run = trigger_dag(store, "wide", now=clock())
    scheduler.run_pass()
    assert len(executor.take()) == 2
    with dynamo_requests() as requests:
        report = scheduler.schedule_run("wide", run.run_id)
    assert [r for r in requests if r.operation == "TransactWriteItems"] == [] and report.dispatched == []
    assert f"run_tasks:wide:{run.run_id}" in report.full_limits


def test_max_active_tasks_counts_per_run_as_in_airflow_3(env):
    """Airflow 3 (#42953) limits the active tasks of each run, not of the whole DAG."""
    store, clock, scheduler, executor = env
    with DAG("wide", schedule=None, start_date=START, max_active_tasks=2) as dag:
        for i in range(4):
            task(lambda: None, task_id=f"t{i}")()
    store_dags(store, dag, now=clock())
    first, second = (trigger_dag(store, "wide", now=clock(), run_id=run_id) for run_id in ("r1", "r2"))
    scheduler.run_pass()
    dispatched = executor.take()
    per_run = {run.run_id: sum(d.key.run_id == run.run_id for d in dispatched) for run in (first, second)}
    assert per_run == {"r1": 2, "r2": 2}


def test_a_pass_whose_read_went_stale_stops_writing_from_it_and_reads_the_run_again(env):
    store, clock, scheduler, _ = env
    with DAG("trio", schedule=None, start_date=START) as dag:
        for name in ("a", "b", "c"):
            task(lambda: None, task_id=name)()
    store_dags(store, dag, now=clock())
    run = trigger_dag(store, "trio", now=clock())
    original, original_item = store.transition_ti, store.transition_item
    creations: list[str] = []
    raced = []

    def racing(key, *, expected, state, **kwargs):  # a claim's write, sent in its transaction
        if list(expected) == [None]:
            creations.append(key.task_id)
            if not raced:  # another scheduler creates this instance between our read and our claim
                raced.append(key.task_id)
                original(key, expected=[None], state=S.SCHEDULED, fields=kwargs.get("fields"))
        return original_item(key, expected=expected, state=state, **kwargs)

    store.transition_item = racing
    report = scheduler.schedule_run("trio", run.run_id)
    # The lost creation made the pass stop there (no doomed writes for the others), then a fresh read claimed all.
    assert sorted(d.key.task_id for d in report.dispatched) == ["a", "b", "c"]
    # (each claim's write counted as built: a claim meeting a limit not created yet sends it again, one claim)
    assert creations.count(raced[0]) == 1 and sorted(set(creations)) == ["a", "b", "c"]
    assert {ti.key.task_id: ti.state for ti in store.get_run_tis("trio", run.run_id)} == {
        "a": S.QUEUED, "b": S.QUEUED, "c": S.QUEUED}
