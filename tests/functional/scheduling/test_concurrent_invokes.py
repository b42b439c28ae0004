"""A scheduler pass sends its claimed tries' Lambda invokes concurrently and waits for all before it returns."""

from __future__ import annotations

import json
import threading

from botocore.exceptions import ClientError
from moto import mock_aws

from airflow.sdk import DAG, task
from tests.functional.scheduling.harness import START, Clock, make_store, store_dags
from updraft.executors.lambda_ import LambdaExecutor
from updraft.model.states import TaskInstanceState
from updraft.scheduling.commands.triggering import trigger_dag
from updraft.scheduling.scheduler import Scheduler, SchedulerConfig

WIDTH = 6


class BlockingLambda:
    """Each invoke waits until all the good ones are in flight at once: sequential invokes break the barrier
    (after its timeout), so the test fails instead of hanging. The ``refused`` task's invoke is throttled. The
    timeout is generous: on a 2-core machine at load ~30 the pool's threads can take seconds to all get scheduled,
    and 5 s broke the barrier there although the invokes were concurrent."""

    def __init__(self, parties: int, refused: str) -> None:
        self.barrier = threading.Barrier(parties, timeout=60)
        self.refused = refused
        self.lock = threading.Lock()
        self.in_flight = self.peak = 0
        self.done: list[str] = []

    def invoke(self, *, FunctionName: str, InvocationType: str, Payload: bytes) -> dict[str, int]:
        task_id = json.loads(Payload)["task_id"]
        if task_id == self.refused:
            raise ClientError({"Error": {"Code": "TooManyRequestsException", "Message": "Rate exceeded"}}, "Invoke")
        with self.lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        self.barrier.wait()
        with self.lock:
            self.in_flight -= 1
            self.done.append(task_id)
        return {"StatusCode": 202}


def test_a_pass_invokes_concurrently_and_returns_after_every_invoke():
    with mock_aws():
        store = make_store()
        clock = Clock()
        with DAG("wide", schedule=None, start_date=START) as dag:

            @task
            def work():
                return None

            for i in range(WIDTH):
                work.override(task_id=f"t{i}")()
        store_dags(store, dag, now=clock())
        run = trigger_dag(store, "wide", now=clock())
        lambda_client = BlockingLambda(WIDTH - 1, refused="t0")
        executor = LambdaExecutor(lambda_client, "updraft-worker")  # type: ignore[arg-type]
        report = Scheduler(store, executor, SchedulerConfig(), clock=clock).run_pass()

        assert len(report.dispatched) == WIDTH
        # Returned only after every invoke ended, all good ones in flight together.
        assert sorted(lambda_client.done) == [f"t{i}" for i in range(1, WIDTH)]
        assert lambda_client.peak == WIDTH - 1 and not lambda_client.barrier.broken
        # The refused invoke is recorded and its try stays queued for the queued timeout, as before.
        assert executor.failures == 1 and [d.key.task_id for d in executor.failed] == ["t0"]
        states = {ti.task_id: ti.state for ti in store.get_run_tis(run.dag_id, run.run_id)}
        assert states == {f"t{i}": TaskInstanceState.QUEUED for i in range(WIDTH)}
