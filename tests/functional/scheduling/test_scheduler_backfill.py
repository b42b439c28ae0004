"""A backfill of 5 dates runs with its limits and the DAG's (issue 13's done-when): the scheduler creates its
runs at most ``max_active_runs`` at a time, in ``run_backwards`` order when asked, while the pool, the DAG's
max_active_tasks and its own scheduled runs hold as ever; two schedulers never create a run twice."""

from __future__ import annotations

import datetime as dt

import pytest

from airflow.sdk import DAG, task
from tests.functional.scheduling.harness import START, Workers, held_slots, scheduler_for, store_dags
from updraft.model.backfills import ReprocessBehavior
from updraft.model.limits import backfill_runs_limit, pool_limit
from updraft.model.records import DagRun
from updraft.model.states import FINISHED_RUN_STATES, DagRunState, TaskInstanceState
from updraft.scheduling.commands.backfill_commands import BackfillRequest, create_backfill, dry_run
from updraft.scheduling.commands.dag_registration import set_paused
from updraft.scheduling.decisions.backfills import CLEARED, date_key
from updraft.scheduling.run_slots import holding, set_state_releasing
from updraft.scheduling.try_lifecycle import TryResult

DAYS = [START + dt.timedelta(days=d) for d in range(5)]


def _dag() -> DAG:
    with DAG("daily", schedule="@daily", start_date=START, catchup=False, max_active_runs=1,
             max_active_tasks=1) as dag:
        @task(pool="narrow")
        def work() -> None:
            return None

        work()
    return dag


def _backfill(store, clock, **over):
    request = BackfillRequest(dag_id="daily", from_date=DAYS[0], to_date=DAYS[-1], max_active_runs=2, **over)
    return create_backfill(store, request, now=clock())


def _backfill_runs(store, states=None):
    return [r for r in store.list_runs("daily") if r.run_type == "backfill" and (states is None or r.state in states)]


@pytest.mark.slow
def test_a_backfill_of_five_dates_runs_with_the_dags_limits(env, monkeypatch):
    store, clock, scheduler, executor = env
    store.set_pool("narrow", 1)
    store_dags(store, _dag(), now=clock())
    backfill = _backfill(store, clock, run_backwards=True)
    workers = Workers(store, scheduler, executor, clock)
    peak_runs = peak_tasks = 0
    created: list[str] = []
    create_run_item = store.create_run_item

    def record(run: DagRun, **kwargs):  # in order, whoever creates it: a tick, or the end of a run (``wakeups``)
        if run.run_id not in created:  # (built again after a refusal: the next run of the plan, in order)
            created.append(run.run_id)
        return create_run_item(run, **kwargs)

    monkeypatch.setattr(store, "create_run_item", record)
    for tick in range(40):
        scheduler.run_pass()
        if tick == 0:  # as Airflow: the backfill's runs do not count against the DAG's max_active_runs=1
            running = [r.run_type for r in store.list_runs("daily") if r.state == DagRunState.RUNNING]
            assert sorted(running) == ["backfill", "backfill", "scheduled"]
        # the limits' holders are the backfill's queued and running runs, and the tries holding pool slots
        peak_runs = max(peak_runs, holding(store, backfill_runs_limit("daily")))
        peak_tasks = max(peak_tasks, held_slots(store, pool_limit("narrow")))
        workers.drain()
        if (store.get_backfill(backfill.id).completed_at is not None
                and all(r.state in FINISHED_RUN_STATES for r in store.list_runs("daily"))):
            break
    assert created == [f"backfill__{d.isoformat()}" for d in reversed(DAYS)]  # run_backwards: newest first
    runs = _backfill_runs(store)
    assert sorted(r.logical_date for r in runs) == DAYS
    assert {r.state for r in runs} == {DagRunState.SUCCESS} and {r.conf.get("n") for r in runs} == {None}
    assert peak_runs == 2  # the backfill's max_active_runs, never more
    assert all(ti.state == "success" for r in runs for ti in store.get_run_tis("daily", r.run_id))
    assert peak_tasks == 1  # the pool of one slot held across backfill and scheduled runs
    scheduled = [r for r in store.list_runs("daily") if r.run_type == "scheduled"]
    assert scheduled and scheduled[0].state == DagRunState.SUCCESS  # as Airflow: not held back by the backfill
    done = store.get_backfill(backfill.id)
    assert done.completed_at is not None and done.created == 5
    assert store.active_backfill_id("daily") is None
    assert holding(store, backfill_runs_limit("daily")) == 0


def test_two_schedulers_create_each_run_once_and_skipped_dates_get_none(env):
    store, clock, scheduler, _executor = env
    store_dags(store, _dag(), now=clock(), unpause=False)  # paused DAG: runs wait, the plan still advances
    other, _ = scheduler_for(store, clock)
    meta = store.get_dag_meta("daily")
    store.create_run(DagRun(dag_id="daily", run_id="manual__x", run_type="manual", dag_hash=meta.dag_hash,
                            state=DagRunState.SUCCESS, logical_date=DAYS[2], start_date=DAYS[2]))
    backfill = _backfill(store, clock, reprocess_behavior=ReprocessBehavior.FAILED)
    created = scheduler.run_pass().runs_created + other.run_pass().runs_created
    assert created == [f"backfill__{d.isoformat()}" for d in DAYS[:2]]
    assert other.run_pass().runs_created == [] and scheduler.run_pass().runs_created == []
    assert store.get_backfill(backfill.id).created == 2
    for run in _backfill_runs(store):  # finish them, as if they ran (their slots given back with their end)
        assert run.ticket and set_state_releasing(store, run, expected=[DagRunState.QUEUED],
                                                  state=DagRunState.SUCCESS, now=clock())
    assert other.run_pass().runs_created == [f"backfill__{d.isoformat()}" for d in (DAYS[3], DAYS[4])]
    assert len(_backfill_runs(store)) == 4  # the day with a run already is skipped
    set_paused(store, "daily", False, now=clock())
    # two queued backfill runs, yet the DAG (max_active_runs=1) gets its scheduled run, as in Airflow
    assert [r for r in scheduler.run_pass().runs_created if r.startswith("scheduled__")]


@pytest.mark.slow
def test_reprocessing_a_failed_date_clears_its_run_which_reruns_to_success(env):
    store, clock, scheduler, executor = env
    store.set_pool("narrow", 1)
    store_dags(store, _dag(), now=clock(), unpause=False)  # no scheduled runs: only the backfill's and the failed
    failing = Workers(store, scheduler, executor, clock,
                      outcome=lambda item: TryResult(TaskInstanceState.FAILED))
    meta = store.get_dag_meta("daily")
    store.create_run(DagRun(dag_id="daily", run_id="manual__failed", run_type="manual", dag_hash=meta.dag_hash,
                            state=DagRunState.QUEUED, logical_date=DAYS[1]))
    set_paused(store, "daily", False, now=clock())
    assert failing.run_to_end("daily", "manual__failed").state == DagRunState.FAILED
    set_paused(store, "daily", True, now=clock())

    backfill = _backfill(store, clock, reprocess_behavior=ReprocessBehavior.FAILED)
    assert backfill.skipped == {date_key(DAYS[1]): CLEARED}
    cleared = store.get_run("daily", "manual__failed")
    assert cleared.state == DagRunState.QUEUED and store.get_run_tis("daily", "manual__failed")[0].state is None
    # asked again (a retried request), the date's run is in flight now: nothing is cleared twice
    request = BackfillRequest(dag_id="daily", from_date=DAYS[0], to_date=DAYS[-1],
                              reprocess_behavior=ReprocessBehavior.FAILED)
    assert DAYS[1] not in [i.logical_date for i in dry_run(store, request, now=clock())]

    set_paused(store, "daily", False, now=clock())
    workers = Workers(store, scheduler, executor, clock)
    for _ in range(30):
        scheduler.run_pass()
        workers.drain()
        if store.get_backfill(backfill.id).completed_at is not None:
            break
    rerun = store.get_run("daily", "manual__failed")
    [ti] = store.get_run_tis("daily", "manual__failed")
    assert (rerun.state, ti.state, ti.try_number) == (DagRunState.SUCCESS, "success", 2)
    assert sorted(r.logical_date for r in _backfill_runs(store)) == [d for d in DAYS if d != DAYS[1]]
