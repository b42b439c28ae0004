"""The previous release's side of the upgrade test: run with that release's code first on ``sys.path``.

Against the embedded AWS at ``argv[1]`` it does what a live environment does before a deploy: registers the DAG
(serialized by its code), triggers two runs (the second waits for ``max_active_runs``), claims the first tries,
starts ``a`` and leaves it running, and fails ``b``'s first try (up for retry). It prints each dispatch it made as
a JSON line, then waits for a line on stdin (the new release is deployed and working meanwhile), finishes ``a``
with its own code as a worker Lambda started before the deploy would (its mini scheduler claims what ``a``
releases), prints those dispatches and exits. Only long-lived entry points are used, so the script keeps working
against older releases; change it only together with ``OLD_RELEASE`` in the test.
"""

from __future__ import annotations

import datetime as dt
import json
import sys

from airflow.sdk import DAG, task
from updraft.executors.recording import RecordingExecutor
from updraft.model.parse_results import ParsedFile
from updraft.model.states import TaskInstanceState
from updraft.runtime.worker import report_try, run_for
from updraft.scheduling.dag_registration import register_parsed_file, set_paused
from updraft.scheduling.scheduler import Scheduler, SchedulerConfig
from updraft.scheduling.triggering import trigger_dag
from updraft.scheduling.try_lifecycle import TryResult, start_try
from updraft.serialization import serialize_dag
from updraft.store.config import StoreConfig
from updraft.store.dynamo import DynamoStore
from updraft.store.tables import create_table

TABLE = "updraft-upgrade"


def now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def upgrade_dag() -> DAG:
    dag = DAG("upgrade", schedule=None, start_date=dt.datetime(2024, 1, 1, tzinfo=dt.UTC), max_active_runs=1,
              max_active_tasks=3)

    @task(dag=dag)
    def work():
        return None

    with dag:
        a = work.override(task_id="a")()
        work.override(task_id="b", retries=1, retry_delay=dt.timedelta(0))()
        middles = [work.override(task_id=f"m{n}", pool="small")() for n in range(4)]
        a >> middles >> work.override(task_id="z")()
    return dag


def emit(dispatches: list) -> None:
    for dispatch in dispatches:
        print(json.dumps(dispatch.lambda_payload()), flush=True)


def main() -> None:
    config = StoreConfig(table_name=TABLE, region="us-east-1", host=sys.argv[1])
    create_table(config)
    store = DynamoStore(config)
    dag = upgrade_dag()
    doc = serialize_dag(dag, relative_fileloc="upgrade.py", file_hash="h")
    register_parsed_file(store, ParsedFile(relative_path="upgrade.py", file_hash="h", dags=[doc]), now=now())
    set_paused(store, "upgrade", False)
    store.set_pool("small", 2)
    executor = RecordingExecutor()
    scheduler = Scheduler(store, executor, SchedulerConfig(parallelism=32), clock=now)
    trigger_dag(store, "upgrade", now=now(), run_id="r1")
    trigger_dag(store, "upgrade", now=now(), run_id="r2")
    scheduler.run_pass()
    claimed = {d.key.task_id: d for d in executor.take()}
    assert set(claimed) == {"a", "b"}, claimed
    started = start_try(store, claimed["a"].key, claimed["a"].try_id, now=now())
    b = claimed.pop("b")
    b_started = start_try(store, b.key, b.try_id, now=now())
    report_try(b, TryResult(TaskInstanceState.FAILED), store=store, scheduler=scheduler,
               dag=scheduler.dag("upgrade", run_for(b, store).dag_hash), started=b_started, now_fn=now)
    emit(executor.take())  # what b's failure dispatched (its retry, when its mini scheduler claims it)
    print("RUNNING", flush=True)
    sys.stdin.readline()
    a = claimed["a"]
    report_try(a, TryResult(TaskInstanceState.SUCCESS), store=store, scheduler=scheduler,
               dag=scheduler.dag("upgrade", run_for(a, store).dag_hash), started=started, now_fn=now)
    emit(executor.take())
    print("DONE", flush=True)


if __name__ == "__main__":
    main()
