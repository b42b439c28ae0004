"""A try's usage rides on its end write, whatever the end: a retry's first try is kept with its usage (its TRY#
record), a deferred try adds its resumed run's usage to the deferral's, and a run's cost counts each try once."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.functional.scheduling.harness import Workers, key, store_dags
from tests.functional.scheduling.test_scheduler_runs import _chain_dag
from updraft.cost.runs import run_cost
from updraft.model.deferrals import Deferral
from updraft.model.states import DagRunState, TaskInstanceState
from updraft.model.usage import Usage
from updraft.scheduling.commands.triggering import trigger_dag
from updraft.scheduling.deferrals import resume_try
from updraft.scheduling.try_lifecycle import TryResult

S = TaskInstanceState


def _used(item, seconds: float, **more) -> Usage:
    return Usage(try_number=item.try_number, seconds=seconds, lambda_requests=1, lambda_gb_s=seconds, **more)


def test_a_retried_tasks_tries_are_each_priced_once(env):
    store, clock, scheduler, executor = env
    store_dags(store, _chain_dag(n=1, retries=1, retry_delay=dt.timedelta(seconds=0)), now=clock())
    run = trigger_dag(store, "chain", now=clock())

    def outcome(item):
        failed = item.try_number == 1
        return TryResult(S.FAILED if failed else S.SUCCESS, usage=_used(item, 10 if failed else 3))

    workers = Workers(store, scheduler, executor, clock, outcome=outcome)
    assert workers.run_to_end("chain", run.run_id, tick=dt.timedelta(seconds=1)).state == DagRunState.SUCCESS
    assert Usage.from_record(store.get_ti(key("chain", run.run_id, "t0")).usage).seconds == 3
    (kept,) = store.get_tries(key("chain", run.run_id, "t0"))
    assert Usage.from_record(kept.usage) == _used(kept, 10)  # the first try's, as its end wrote it
    cost = run_cost(store, "chain", run.run_id, region="us-east-1")
    assert [(t.try_number, t.usage.seconds) for t in cost.tries] == [(1, 10), (2, 3)]
    assert cost.unmetered == 0
    assert sum(t.breakdown.usd for t in cost.tries) == pytest.approx(13 * 0.0000166667 + 2 * 0.2e-6)


def test_a_deferred_try_adds_its_resumed_run_to_its_deferral(env):
    store, clock, scheduler, executor = env
    store_dags(store, _chain_dag(n=1), now=clock())
    run = trigger_dag(store, "chain", now=clock())
    t0 = key("chain", run.run_id, "t0")

    def outcome(item):
        if store.get_ti(item.key).next_method is None:
            deferral = Deferral(classpath="airflow.providers.standard.triggers.temporal.DateTimeTrigger",
                                kwargs={}, next_method="execute_complete", next_kwargs=None,
                                resume_at=clock() + dt.timedelta(hours=1), times_out=False)
            return TryResult(S.DEFERRED, deferral=deferral, usage=_used(item, 2, sfn_transitions=3))
        return TryResult(S.SUCCESS, usage=_used(item, 1))

    workers = Workers(store, scheduler, executor, clock, outcome=outcome)
    scheduler.run_pass()
    workers.drain()
    deferred = store.get_ti(t0)
    assert deferred.state == S.DEFERRED
    assert Usage.from_record(deferred.usage) == _used(deferred, 2, sfn_transitions=3)  # by the deferral's write
    clock.advance(seconds=3601)
    resume_try(store, t0, deferred.try_id, now=clock())
    assert workers.run_to_end("chain", run.run_id).state == DagRunState.SUCCESS
    ended = store.get_ti(t0)
    assert ended.try_number == 1
    assert Usage.from_record(ended.usage) == Usage(try_number=1, seconds=3, lambda_requests=2, lambda_gb_s=3,
                                                   sfn_transitions=3)
