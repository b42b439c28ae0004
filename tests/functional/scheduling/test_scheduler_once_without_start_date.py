"""``schedule="@once"`` with no start date: Airflow 3 runs it once, as soon as it is registered (issue 17).

Without a start date the timetable's answer is the clock's, so the run's logical date is fixed when the DAG is
registered (Airflow's ``DagModel.next_dagrun``); schedulers whose clocks differ must all create that one run.
"""

from __future__ import annotations

import datetime as dt
import threading

from moto import mock_aws

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG
from tests.functional.scheduling.harness import START, Clock, make_store, scheduler_for, store_dags


def _once():
    with DAG("once_now", schedule="@once") as dag:
        EmptyOperator(task_id="noop")
    return dag


def test_once_without_start_date_runs_once_at_registration(env):
    store, clock, scheduler, _ = env
    registered = clock()
    store_dags(store, _once(), now=registered)
    clock.advance(seconds=30)
    assert len(scheduler.run_pass().runs_created) == 1
    clock.advance(days=1)
    assert scheduler.run_pass().runs_created == []
    [run] = store.list_runs("once_now")
    assert run.logical_date == registered and run.run_id == f"scheduled__{registered.isoformat()}"


def test_racing_schedulers_with_different_clocks_create_the_once_run_exactly_once(serialized_moto):
    with mock_aws():
        store = make_store()
        registered = START + dt.timedelta(days=1)
        store_dags(store, _once(), now=registered)
        reports = []
        schedulers = [scheduler_for(store, Clock(registered + dt.timedelta(seconds=i + 1)))[0] for i in range(6)]
        threads = [threading.Thread(target=lambda s=s: reports.append(s.run_pass())) for s in schedulers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        runs = store.list_runs("once_now")
        assert [r.logical_date for r in runs] == [registered]
        assert sum(len(r.runs_created) for r in reports) == 1
