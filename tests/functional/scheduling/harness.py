"""A store on moto, a clock the test controls, and workers that play the worker Lambda with scripted outcomes."""

from __future__ import annotations

import collections
import datetime as dt
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from tests.mocked_clients import mocked_client
from updraft.executors.base import Dispatch
from updraft.executors.recording import RecordingExecutor
from updraft.limits import counters
from updraft.model.parse_results import ParsedFile
from updraft.model.records import DagRun, TIKey
from updraft.model.states import FINISHED_RUN_STATES, TaskInstanceState
from updraft.scheduling.commands.dag_registration import register_parsed_file, set_paused
from updraft.scheduling.holding import limits_table
from updraft.scheduling.scheduler import Scheduler, SchedulerConfig
from updraft.scheduling.try_lifecycle import TryResult, finish_try, start_try
from updraft.serialization import serialize_dag
from updraft.store.config import StoreConfig
from updraft.store.dynamo import DynamoStore
from updraft.store.tables import create_table

START = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


class Clock:
    """Time that moves only when the test says so (retries, timeouts and leases are tested without sleeping)."""

    def __init__(self, now: dt.datetime = START + dt.timedelta(days=30)) -> None:
        self.now = now
        self._lock = threading.Lock()

    def __call__(self) -> dt.datetime:
        with self._lock:
            return self.now

    def advance(self, **kwargs: float) -> None:
        with self._lock:
            self.now += dt.timedelta(**kwargs)


def make_store(table: str = "updraft-test") -> DynamoStore:
    config = StoreConfig(table_name=table, region="us-east-1")
    create_table(config, client=mocked_client("dynamodb"))
    return DynamoStore(config)


def store_dags(store: DynamoStore, *dags, now: dt.datetime, unpause: bool = True) -> None:
    """What the parser Lambda does for a file defining ``dags``."""
    docs = [serialize_dag(d, relative_fileloc=f"{d.dag_id}.py", file_hash="h") for d in dags]
    for dag, doc in zip(dags, docs, strict=True):
        register_parsed_file(store, ParsedFile(relative_path=f"{dag.dag_id}.py", file_hash="h", dags=[doc]), now=now)
        if unpause:
            set_paused(store, dag.dag_id, False)


Outcome = Callable[[Dispatch], TryResult]


def succeed(_: Dispatch) -> TryResult:
    return TryResult(TaskInstanceState.SUCCESS)


@dataclass
class Workers:
    """Runs every dispatched try: start (fenced), outcome, finish (fenced), then the mini scheduler."""

    store: DynamoStore
    scheduler: Scheduler
    executor: RecordingExecutor
    clock: Clock
    outcome: Outcome = succeed
    started: collections.Counter = field(default_factory=collections.Counter)

    def run_one(self, item: Dispatch) -> bool:
        if not start_try(self.store, item.key, item.try_id, now=self.clock()):
            return False
        self.started[(item.key, item.try_number)] += 1
        run = self.store.get_run(item.key.dag_id, item.key.run_id)
        dag = self.scheduler.dag(run.dag_id, run.dag_hash)
        finish_try(self.store, item.key, item.try_id, self.outcome(item), now=self.clock(), dag=dag)
        self.scheduler.schedule_run(item.key.dag_id, item.key.run_id)
        return True

    def drain(self) -> int:
        """Run dispatched tries (and what they dispatch in turn) until nothing is left; returns how many ran."""
        ran = 0
        while items := self.executor.take():
            for item in items:
                ran += self.run_one(item)
        return ran

    def run_to_end(self, dag_id: str, run_id: str, *, max_ticks: int = 50, tick: dt.timedelta | None = None) -> DagRun:
        for _ in range(max_ticks):
            self.drain()
            run = self.store.get_run(dag_id, run_id)
            if run.state in FINISHED_RUN_STATES:
                return run
            if tick:
                self.clock.advance(seconds=tick.total_seconds())
            self.scheduler.run_pass()
        raise AssertionError(f"run {run_id} did not finish: {self.states(dag_id, run_id)}")

    def states(self, dag_id: str, run_id: str) -> dict[str, str | None]:
        return {ti.key.label: ti.state and ti.state.value for ti in self.store.get_run_tis(dag_id, run_id)}


class LambdaWorkers(Workers):
    """Workers that play each try as the worker Lambda does (``runtime.worker``): the dispatch as the Lambda
    executor's payload, start fenced, the run (carried, or read), then ``report_try`` with the try as started
    (record, release, next hop); no task code. The capacity benchmark and the request-count test use it, so their
    counts are the Lambda's."""

    def run_one(self, item: Dispatch) -> bool:
        from updraft.runtime.worker import learn_run, report_try, run_for

        item = Dispatch.from_payload(json.loads(json.dumps(item.lambda_payload())))
        learn_run(item, self.store)
        started = start_try(self.store, item.key, item.try_id, now=self.clock())
        if not started:
            return False
        self.started[(item.key, item.try_number)] += 1
        run = run_for(item, self.store)
        assert run is not None
        report_try(item, self.outcome(item), store=self.store, scheduler=self.scheduler,
                   dag=self.scheduler.dag(run.dag_id, run.dag_hash), started=started, now_fn=self.clock)
        return True


def scheduler_for(store: DynamoStore, clock: Clock, **config) -> tuple[Scheduler, RecordingExecutor]:
    executor = RecordingExecutor()
    return Scheduler(store, executor, SchedulerConfig(**config), clock=clock), executor


def held_slots(store: DynamoStore, limit_id: str) -> int:
    """The slots of ``limit_id`` its holders' tickets hold now (its size less its free slots; 0: not created)."""
    limit = counters.read(limits_table(store), limit_id)
    return 0 if limit is None else limit.size - sum(limit.frees)


def key(dag_id: str, run_id: str, task_id: str, map_index: int = -1) -> TIKey:
    return TIKey(dag_id, run_id, task_id, map_index)
