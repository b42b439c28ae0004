"""Every DynamoDB write of a chain hop, met by a crash after it and by its acknowledgement lost: the run still
succeeds, no try runs twice, and every limit ends empty (nothing a crash leaves is held by a try that ended).

The hop is the worker Lambda's (``LambdaWorkers``: ``report_try``) for t0 of t0 >> t1: its fenced start, its end
with the release of its ticket (one transaction: the instance and a give to each of its 3 limits), then t1's
claim (one transaction: t1 queued with its ticket and a take of each limit). A crash after a write is an
invocation that died there: its dispatch is delivered again (at least once), and the ticks go on with the clock
moving past the tries' lease.
"""

from __future__ import annotations

import datetime as dt
import itertools

import pytest
from moto import mock_aws

from airflow.sdk import DAG, task
from tests.functional.chaos.dynamo_faults import DynamoFaults, SimulatedCrash
from tests.functional.scheduling.harness import (
    START,
    Clock,
    LambdaWorkers,
    held_slots,
    make_store,
    scheduler_for,
    store_dags,
)
from updraft.model.limits import DEFAULT_POOL, PARALLELISM_LIMIT, pool_limit, run_tasks_limit
from updraft.model.states import DagRunState
from updraft.scheduling.commands.triggering import trigger_dag

WRITES_IN_A_HOP = 3  # start, end + release (a transaction), the next try's claim (a transaction)
LIMITS = [pool_limit(DEFAULT_POOL), run_tasks_limit("hop", "r"), PARALLELISM_LIMIT]
_TABLES = itertools.count()


@pytest.fixture(scope="module", autouse=True)
def aws():
    with mock_aws():
        yield


def _dag() -> DAG:
    # Retries: a try whose worker died after its start is a zombie, retried as Airflow does.
    with DAG("hop", schedule=None, start_date=START,
             default_args={"retries": 2, "retry_delay": dt.timedelta(seconds=1)}) as dag:

        @task
        def work():
            return None

        work.override(task_id="t0")() >> work.override(task_id="t1")()
    return dag


def _life(faults: DynamoFaults) -> tuple[DagRunState, int, dict[str, int], bool]:
    """t0's hop under ``faults``, then ticks to the end: the run's state, the most times a try started, each
    limit's held slots as left, and whether t1 went out from the hop itself (without a tick)."""
    store = make_store(f"handover-faults-{next(_TABLES)}")
    clock = Clock()
    store_dags(store, _dag(), now=clock())
    trigger_dag(store, "hop", now=clock(), run_id="r")
    scheduler, executor = scheduler_for(store, clock)
    scheduler.run_pass()
    (first,) = executor.take()
    workers = LambdaWorkers(store, scheduler, executor, clock)
    with faults.installed():
        try:
            workers.run_one(first)
        except SimulatedCrash:
            # Delivered again to a new invocation: its fenced start refuses what the dead one started.
            healthy, executor = scheduler_for(store, clock)
            workers = LambdaWorkers(store, healthy, executor, clock, started=workers.started)
            workers.run_one(first)
    from_the_hop = any(d.key.task_id == "t1" for d in executor.dispatched)
    ended = workers.run_to_end("hop", "r", max_ticks=20, tick=dt.timedelta(minutes=11))
    holders = {limit_id: held_slots(store, limit_id) for limit_id in LIMITS}
    assert all(ti.ticket is None for ti in store.get_run_tis("hop", "r"))
    return ended.state, max(workers.started.values(), default=0), holders, from_the_hop


def test_the_sweep_covers_every_write_of_the_hop():
    faults = DynamoFaults()
    state, _, _, from_the_hop = _life(faults)
    assert (state, from_the_hop) == (DagRunState.SUCCESS, True)
    assert faults.writes == WRITES_IN_A_HOP


@pytest.mark.parametrize("at", range(1, WRITES_IN_A_HOP + 1))
@pytest.mark.parametrize("mode", ["after", "lost_ack"])
def test_every_write_of_a_hand_over_hop_survives_every_fault(mode, at):
    faults = DynamoFaults(mode, at)
    state, most_starts, holders, from_the_hop = _life(faults)
    assert state == DagRunState.SUCCESS, faults.fired
    assert most_starts == 1  # no try ran twice
    assert holders == {limit_id: 0 for limit_id in LIMITS}, faults.fired  # every slot back
    if mode == "lost_ack":
        assert from_the_hop, f"a lost ack at {faults.fired} left t1 to a tick"
