"""Every DynamoDB write of a DAG's life (parse, trigger, scheduler, workers) met by each fault in turn.

For each write number N of a clean run and each fault (crash before it, crash after it, its acknowledgement lost and
the request retried by the SDK), the run still ends as Airflow would end it: success, no try run twice, every slot
back. A lost acknowledgement must not even need the timeouts: the caller recognises its own write and goes on, so
the run finishes without the clock moving, and no retry is burnt.
"""

from __future__ import annotations

import datetime as dt
import functools
import itertools

import pytest
from moto import mock_aws

from airflow.sdk import DAG, task
from tests.functional.chaos.dynamo_faults import DynamoFaults, SimulatedCrash
from tests.functional.scheduling.harness import START, Clock, Workers, held_slots, make_store, scheduler_for, store_dags
from updraft.model.limits import pool_limit
from updraft.model.states import DagRunState
from updraft.scheduling.commands.triggering import trigger_dag

RUN_ID = "manual__faults"
# A clean life's writes (parse, trigger, scheduling, tries); the sweep checks the figure still covers them all.
WRITES_IN_A_LIFE = 26
# The first writes are the parser's and the trigger's: a crash before any later one is the store-level sweep's
# (tests/functional/scheduling/test_scheduler_faults.py), so this one adds crashes before these only.
PARSE_AND_TRIGGER_WRITES = 6
FAULT_POINTS = ([("before", at) for at in range(1, PARSE_AND_TRIGGER_WRITES + 1)]
                + [(mode, at) for mode in ("after", "lost_ack") for at in range(1, WRITES_IN_A_LIFE + 1)])


def _dag():
    # Retries: a try whose worker died mid-way becomes a zombie and is retried, as Airflow does.
    with DAG("faulty", schedule=None, start_date=START, max_active_tasks=2,
             default_args={"retries": 2, "retry_delay": dt.timedelta(seconds=1)}) as dag:

        @task
        def work():
            return None

        # One task: a second one repeats the same writes (take, claim, start, end, release), at twice the cost.
        work.override(task_id="a", pool="p1")()
    return dag


def _redelivered(step):
    """At-least-once delivery: an invocation that died is delivered again (the fault fires once)."""
    try:
        return step()
    except SimulatedCrash:
        return step()


def _trigger(store, clock):
    # A client whose request died retries it; a run its first request created is the one it asked for.
    try:
        return trigger_dag(store, "faulty", now=clock(), run_id=RUN_ID)
    except SimulatedCrash:
        return store.get_run("faulty", RUN_ID) or trigger_dag(store, "faulty", now=clock(), run_id=RUN_ID)


@pytest.fixture(scope="module", autouse=True)
def aws():
    """One moto account for the sweep: each life has a table of its own (an account's start and end cost more
    than a life's table)."""
    with mock_aws():
        yield


_TABLES = itertools.count()


def _life(faults: DynamoFaults):
    """The DAG's life under ``faults``, in a new table: the run as ended, the tries started per (key, try number),
    the instances and the pool as left."""
    store = make_store(f"updraft-faults-{next(_TABLES)}")
    clock = Clock()
    store.set_pool("p1", 1)
    with faults.installed():
        _redelivered(functools.partial(store_dags, store, _dag(), now=clock()))
        run = _trigger(store, clock)
        doomed, doomed_executor = scheduler_for(store, clock)
        doomed._last_parallelism_check = clock()  # a warm container that sized parallelism a moment ago
        workers = Workers(store, doomed, doomed_executor, clock)
        try:
            doomed.run_pass()
            workers.run_to_end("faulty", run.run_id, max_ticks=3)
        except (SimulatedCrash, AssertionError):
            pass
        ended = store.get_run("faulty", run.run_id)
        if ended.state != DagRunState.SUCCESS:
            stalled = workers.states("faulty", run.run_id)
            assert faults.mode != "lost_ack", f"a lost ack at {faults.fired} stalled the run: {stalled}"
            # A new invocation picks up: what the dead one dispatched is still delivered (at least once).
            healthy, executor = scheduler_for(store, clock)
            executor.dispatched.extend(doomed_executor.take())
            workers = Workers(store, healthy, executor, clock, started=workers.started)
            ended = workers.run_to_end("faulty", run.run_id, max_ticks=30, tick=dt.timedelta(minutes=11))
        return ended, workers.started, store.get_run_tis("faulty", run.run_id), held_slots(store, pool_limit("p1"))


def test_the_sweep_covers_every_write_of_a_life():
    faults = DynamoFaults()
    ended, _, _, _ = _life(faults)
    print("writes in a life:", faults.writes)
    assert ended.state == DagRunState.SUCCESS
    assert faults.writes <= WRITES_IN_A_LIFE


@pytest.mark.slow  # a sweep: 58 lives, each in a table of its own
@pytest.mark.parametrize(("mode", "at"), FAULT_POINTS)
def test_every_write_survives_every_fault(mode, at):
    faults = DynamoFaults(mode, at)
    ended, started, tis, pool = _life(faults)
    assert ended.state == DagRunState.SUCCESS, faults.fired
    assert max(started.values()) == 1  # no try ran twice
    assert pool == 0 and all(ti.ticket is None for ti in tis)  # every slot back
    if mode == "lost_ack":
        assert {ti.task_id: ti.try_number for ti in tis} == {"a": 1}  # no retry burnt
