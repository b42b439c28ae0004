"""What the CLI tests share: the CLI as a user runs it, a handle on the test's system, DAGs, and a scheduler
with workers playing the Lambdas (conftest holds only the fixtures: it is not importable by name)."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner, Result

from tests.functional.scheduling.harness import Workers, store_dags
from updraft.cli.app import cli
from updraft.executors.recording import RecordingExecutor
from updraft.local.provision import LocalResources
from updraft.scheduling.scheduler import Scheduler
from updraft.scheduling.try_lifecycle import TryResult
from updraft.services import Services


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def api_handler(services: Services) -> Callable[[dict], dict]:
    """The API function as local mode's API Gateway calls it, serving ``services``' environment."""
    from tests.functional.lambda_helpers import lambda_context
    from updraft.api.app import build_app

    app = build_app(lambda: services)
    return lambda event: app.resolve(event, lambda_context("api"))


def invoke(*args: str) -> Result:
    """The CLI as a user runs it; unexpected exceptions propagate so a test never mistakes a crash for an error."""
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@dataclass
class LocalSystem:
    services: Services
    resources: LocalResources
    home: Path

    @property
    def store(self):
        return self.services.store

    def add_dags(self, *dags, unpause: bool = True) -> None:
        """What the parser does for one file per DAG."""
        store_dags(self.store, *dags, now=utcnow(), unpause=unpause)


class BackgroundScheduler:
    """Plays the scheduler and worker Lambdas in a thread: picks up queued runs and runs their tasks, with an
    outcome per try chosen by the test, so ``trigger --wait`` watches real state changes."""

    def __init__(self, config, outcome: Callable, poll: float = 0.05) -> None:
        services = Services(config)  # its own clients: the CLI's run on the test's thread
        self.store = services.store
        self.executor = RecordingExecutor()
        self.scheduler = Scheduler(self.store, self.executor, clock=utcnow)
        self.workers = Workers(self.store, self.scheduler, self.executor, utcnow, outcome=outcome)
        self.poll = poll
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="test-scheduler", daemon=True)
        self.error: BaseException | None = None

    def _loop(self) -> None:
        try:
            while not self._stop.is_set():
                self.scheduler.run_pass()
                self.workers.drain()
                self._stop.wait(self.poll)
        except BaseException as exc:  # surfaced by stop(): a dead scheduler must fail the test, not hang it
            self.error = exc

    def __enter__(self) -> BackgroundScheduler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        if self.error is not None:
            raise self.error


def outcome_failing(*task_ids: str) -> Callable:
    from updraft.model.states import TaskInstanceState

    def outcome(item) -> TryResult:
        failed = item.key.task_id in task_ids
        return TryResult(TaskInstanceState.FAILED if failed else TaskInstanceState.SUCCESS, force_fail=failed)

    return outcome


START = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


def chain_dag(dag_id: str = "chain", n: int = 3, schedule: str | None = "@daily", **task_kwargs):
    """t0 >> t1 >> ... of TaskFlow tasks (dispatched to workers, unlike EmptyOperator, which the scheduler
    finishes itself); by default on a daily catchup schedule, so its next runs are known dates."""
    from airflow.sdk import DAG, task

    with DAG(dag_id, schedule=schedule, start_date=START, catchup=True, tags=["cli", "demo"],
             default_args={"owner": "data-eng", **task_kwargs}) as dag:

        @task
        def step():
            return None

        prev = None
        for i in range(n):
            cur = step.override(task_id=f"t{i}")()
            if prev is not None:
                prev >> cur
            prev = cur
    return dag


def params_dag(dag_id: str = "with_params"):
    """An unscheduled DAG whose conf must carry an integer ``n`` (a trigger with a string fails validation)."""
    from airflow.providers.standard.operators.empty import EmptyOperator
    from airflow.sdk import DAG, Param

    with DAG(dag_id, schedule=None, start_date=START, params={"n": Param(1, type="integer")}) as dag:
        EmptyOperator(task_id="only")
    return dag


def mapped_dag(dag_id: str = "mapped"):
    from airflow.sdk import DAG, task

    with DAG(dag_id, schedule=None, start_date=START) as dag:

        @task
        def each(x):
            return x

        each.expand(x=[1, 2, 3])
    return dag


def run_to_end(system: LocalSystem, dag_id: str, run_id: str, outcome: Callable | None = None):
    """Synchronously what the scheduler and workers do with a queued run; returns the finished run."""
    from tests.functional.scheduling.harness import succeed

    executor = RecordingExecutor()
    scheduler = Scheduler(system.store, executor, clock=utcnow)
    workers = Workers(system.store, scheduler, executor, utcnow, outcome=outcome or succeed)
    return workers.run_to_end(dag_id, run_id, max_ticks=20)
