"""A wide claim shared among scheduler invocations (``scheduling.claim_shares``): the pass that finds a run with
many ready tries that all fit claims one share and asks other invocations for the rest; each try is dispatched
once whatever order, repetition or loss the asks meet."""

from __future__ import annotations

import threading

import pytest

from airflow.sdk import DAG, task
from tests.functional.scheduling.harness import START, scheduler_for, store_dags
from updraft.model.states import TaskInstanceState
from updraft.scheduling.claim_shares import MAX_SHARES, Share, share_count
from updraft.scheduling.commands.triggering import trigger_dag

SHARE_MIN = 10  # shares of 10 tries (100 deployed): the same cuts on runs a tenth as wide
WIDTH = 2 * SHARE_MIN + 5  # two shares


@pytest.fixture(autouse=True)
def small_shares(monkeypatch):
    monkeypatch.setattr("updraft.scheduling.claim_shares.SHARE_MIN", SHARE_MIN)


def _wide(store, clock, *, max_active_tasks: int = WIDTH):
    """A run of WIDTH independent tasks, none of its instances written yet."""
    with DAG("wide", schedule=None, start_date=START, max_active_tasks=max_active_tasks) as dag:
        for i in range(WIDTH):
            task(lambda: None, task_id=f"t{i:03d}")()
    store.set_pool("default_pool", 2 * WIDTH)
    store_dags(store, dag, now=clock())
    return trigger_dag(store, "wide", now=clock())


@pytest.fixture
def wide(env):
    store, clock, _, _ = env
    scheduler, executor = scheduler_for(store, clock, parallelism=4 * WIDTH)
    asks: list[tuple[str, str, Share]] = []
    scheduler.claims.ask_share = lambda dag_id, run_id, share: asks.append((dag_id, run_id, share))
    return store, clock, scheduler, executor, asks


def _labels(dispatches) -> list[str]:
    return [d.key.task_id for d in dispatches]


def test_a_wide_run_is_cut_into_shares_and_the_asker_claims_only_its_own(wide):
    store, clock, scheduler, executor, asks = wide
    run = _wide(store, clock)
    report = scheduler.schedule_run("wide", run.run_id)

    assert share_count(WIDTH) == 2
    assert asks == [("wide", run.run_id, Share(1, 2))]
    assert report.shared_out == {("wide", run.run_id): [Share(0, 2)]}
    mine = _labels(executor.take())
    assert mine and all(Share(0, 2).holds(d.key) for d in report.dispatched)
    # The other share's instances are the asked invocation's to create: this pass wrote none of them.
    stored = store.get_run_tis("wide", run.run_id)
    assert sorted(ti.task_id for ti in stored) == sorted(mine)
    assert {ti.state for ti in stored} == {TaskInstanceState.QUEUED}

    # The asked invocation (another scheduler) claims the rest; it shares nothing out again.
    helper, helper_executor = scheduler_for(store, clock, parallelism=4 * WIDTH)
    helper.claims.ask_share = lambda *_: pytest.fail("a share's invocation asked for shares")
    helped = helper.schedule_run("wide", run.run_id, share=Share(1, 2))
    theirs = _labels(helper_executor.take())
    assert helped.shared_out == {} and all(Share(1, 2).holds(d.key) for d in helped.dispatched)
    assert sorted(mine + theirs) == [f"t{i:03d}" for i in range(WIDTH)]

    # Delivered again (Lambda delivers at least once): nothing more.
    assert helper.schedule_run("wide", run.run_id, share=Share(1, 2)).dispatched == []
    assert {ti.state for ti in store.get_run_tis("wide", run.run_id)} == {TaskInstanceState.QUEUED}


def test_a_run_whose_tries_do_not_all_fit_is_claimed_by_the_pass_alone(wide):
    store, clock, scheduler, executor, asks = wide
    run = _wide(store, clock, max_active_tasks=WIDTH - 1)  # one will wait: the order of claims matters
    report = scheduler.schedule_run("wide", run.run_id)
    assert asks == [] and report.shared_out == {}
    assert len(executor.take()) == WIDTH - 1


def test_a_share_whose_ask_fails_is_claimed_by_the_asker(wide):
    store, clock, scheduler, executor, _ = wide

    def refuse(*_):
        raise ConnectionError("the Lambda endpoint is unreachable")

    scheduler.claims.ask_share = refuse
    run = _wide(store, clock)
    report = scheduler.schedule_run("wide", run.run_id)
    assert report.shared_out == {("wide", run.run_id): [Share(0, 2), Share(1, 2)]}
    assert len(set(_labels(executor.take()))) == WIDTH


def test_a_share_claimed_while_its_asker_is_lost_leaves_the_rest_to_the_tick(wide):
    """The asker crashed after asking: the share's invocation claims its own instances only, creating no other;
    the tick evaluates the rest (never written) and claims them."""
    store, clock, scheduler, executor, _ = wide
    run = _wide(store, clock)
    helper, helper_executor = scheduler_for(store, clock, parallelism=4 * WIDTH)
    helper.schedule_run("wide", run.run_id, share=Share(1, 2))
    theirs = _labels(helper_executor.take())
    assert theirs and sorted(ti.task_id for ti in store.get_run_tis("wide", run.run_id)) == sorted(theirs)

    scheduler.claims.ask_share = None  # the tick of a scheduler that shares nothing out
    scheduler.run_pass()
    rest = _labels(executor.take())
    assert sorted(theirs + rest) == [f"t{i:03d}" for i in range(WIDTH)]


def test_a_share_s_invocation_applies_only_its_own_instances_changes(wide):
    """A share's evaluation of the run leaves the run's end and the other instances to the asker."""
    store, clock, _, _, _ = wide
    run = _wide(store, clock)
    helper, _ = scheduler_for(store, clock, parallelism=4 * WIDTH)
    evaluated = []
    original = helper._evaluate

    def spy(*args, **kwargs):
        evaluated.append(kwargs.get("share"))
        return original(*args, **kwargs)

    helper._evaluate = spy
    helper.schedule_run("wide", run.run_id, share=Share(1, 2))
    assert evaluated == [Share(1, 2)]
    assert store.get_run("wide", run.run_id).state == "running"


def test_asker_and_shares_racing_dispatch_every_try_once(serialized_moto, env):
    """Shares asked of schedulers in threads of their own, running while the asker claims its share and while a
    redelivered ask of the same share runs beside the first: each try once."""
    store, clock, _, _ = env
    width = MAX_SHARES * SHARE_MIN  # every share asked
    with DAG("race", schedule=None, start_date=START, max_active_tasks=width) as dag:
        for i in range(width):
            task(lambda: None, task_id=f"t{i:03d}")()
    store.set_pool("default_pool", 2 * width)
    store_dags(store, dag, now=clock())
    run = trigger_dag(store, "race", now=clock())
    asker, asker_executor = scheduler_for(store, clock, parallelism=4 * width)
    executors, threads, errors = [asker_executor], [], []

    def claim_share(share: Share) -> None:
        helper, helper_executor = scheduler_for(store, clock, parallelism=4 * width)
        executors.append(helper_executor)
        try:
            helper.schedule_run("race", run.run_id, share=share)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    def ask(dag_id: str, run_id: str, share: Share) -> None:
        for _ in range(2 if share.index == 1 else 1):  # share 1's ask is delivered twice
            thread = threading.Thread(target=claim_share, args=(share,))
            threads.append(thread)
            thread.start()

    asker.claims.ask_share = ask
    report = asker.schedule_run("race", run.run_id)
    for thread in threads:
        thread.join(timeout=120)
    assert errors == [] and report.shared_out == {("race", run.run_id): [Share(0, MAX_SHARES)]}
    labels = [label for executor in executors for label in _labels(executor.take())]
    assert len(labels) == width and len(set(labels)) == width
    tis = store.get_run_tis("race", run.run_id)
    assert len(tis) == width and {ti.state for ti in tis} == {TaskInstanceState.QUEUED}
