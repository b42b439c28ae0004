"""Scheduler benchmark: claims per second with 1, 2, 4 and 8 concurrent schedulers, and DynamoDB requests per task.

usage: python bench/scheduler_bench.py [--tasks 200] [--repeat 3]

Runs on the embedded AWS (moto in-process, one request at a time, as the concurrency tests do), so absolute
throughput is moto's, not DynamoDB's: the number that carries over to real AWS is requests per task (cost), and
the invariants (0 double dispatches, 0 over-claims) that are checked on every run.

Two phases per concurrency level, on a fresh table each time:
- claim: one run of a DAG with ``--tasks`` independent tasks; N scheduler threads run passes until every task
  instance is claimed; claims/s = tasks / wall time. Limits are set so they do not bind (parallelism = tasks).
- full run: the same DAG run to the end with workers (start + finish + the mini scheduler after every task),
  counting every DynamoDB request, split by who made it (scheduler pass, claims, worker reports).
And per level, over-claims where limits bind: N schedulers race over two runs sharing an 8-slot pool, one of
them capped at max_active_tasks 5; any try claimed beyond either limit counts (and the pool must fill).
Prints a markdown table and writes bench/results/scheduler.json.
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
os.environ.setdefault("AWS_ACCESS_KEY_ID", "bench")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench")

LEVELS = (1, 2, 4, 8)


class RequestCounter:
    """Serializes moto (as the tests do) and counts requests by operation name."""

    def __init__(self) -> None:
        from moto.core import botocore_stubber

        self.lock = threading.RLock()
        self.counts: collections.Counter = collections.Counter()
        original = botocore_stubber.BotocoreStubber.__call__
        counter = self

        def counted(stub, event_name, request, **kwargs):
            with counter.lock:
                target = request.headers.get("X-Amz-Target", b"")
                name = target.decode().split(".")[-1] if isinstance(target, bytes) else str(target).split(".")[-1]
                counter.counts[name or "s3"] += 1
                return original(stub, event_name, request, **kwargs)

        botocore_stubber.BotocoreStubber.__call__ = counted

    def take(self) -> collections.Counter:
        with self.lock:
            counts, self.counts = self.counts, collections.Counter()
        return counts


def _dag(width: int):
    from airflow.sdk import DAG, task

    with DAG("bench_fanout", schedule=None, start_date=dt.datetime(2024, 1, 1, tzinfo=dt.UTC),
             max_active_tasks=width) as dag:

        @task
        def work():
            return None

        for i in range(width):
            work.override(task_id=f"t{i:04d}")()
    return dag


def _setup(width: int):
    from tests.functional.scheduling.harness import Clock, make_store, store_dags
    from updraft.scheduling.commands import trigger_dag

    store = make_store(f"bench-{time.monotonic_ns()}")
    clock = Clock()
    store.set_pool("default_pool", width * 2)  # limits must not bind: this measures the claim path itself
    store_dags(store, _dag(width), now=clock())
    run = trigger_dag(store, "bench_fanout", now=clock())
    return store, clock, run


def race_schedulers(schedulers: int, make_scheduler: Any, finished: Any, *, event_driven: bool = False) -> float:
    """Wall seconds for ``schedulers`` threads, each with its own scheduler (``make_scheduler()``), to run passes
    until ``finished()`` (bounded: a bug must not hang the benchmark).

    Back to back (the default), a scheduler whose pass found nothing to claim runs another at once, reading the
    run again while the others claim. ``event_driven``: as deployed, where a pass runs on an event (a task's end,
    the tick) and an invocation with nothing to do ends, such a scheduler waits for the next tick instead, and
    the tick comes when every scheduler is waiting (nothing happens here but claims, so no sooner is needed)."""
    done = threading.Event()
    idle = threading.Condition()
    waiting = [0]
    ticks = [0]

    def wait_for_tick() -> None:
        with idle:
            waiting[0] += 1
            tick = ticks[0]
            if waiting[0] == schedulers:  # every scheduler waits: the tick wakes them all
                waiting[0] = 0
                ticks[0] += 1
                idle.notify_all()
                return
            idle.wait_for(lambda: ticks[0] != tick or done.is_set(), timeout=60)

    def loop() -> None:
        scheduler = make_scheduler()
        for _ in range(1000):
            if done.is_set():
                break
            report = scheduler.run_pass()
            if finished():
                done.set()
            elif event_driven and not report.dispatched and not report.stale_runs:
                wait_for_tick()
        with idle:
            idle.notify_all()

    started = time.perf_counter()
    threads = [threading.Thread(target=loop) for _ in range(schedulers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - started


def claim_phase(width: int, schedulers: int, counter: RequestCounter) -> dict:
    from updraft.executors.recording import RecordingExecutor
    from updraft.scheduling import Scheduler, SchedulerConfig

    store, clock, _ = _setup(width)
    executor = RecordingExecutor()
    config = SchedulerConfig(parallelism=width * 2)
    counter.take()
    wall = race_schedulers(schedulers, lambda: Scheduler(store, executor, config, clock=clock),
                           lambda: len(executor.dispatched) >= width)
    requests = counter.take()
    per_try = collections.Counter((d.key, d.try_number) for d in executor.dispatched)
    return {"wall_s": wall, "claims_per_s": width / wall, "double_dispatches": sum(n - 1 for n in per_try.values()),
            "claimed": len(per_try), "requests": sum(requests.values())}


BIND_POOL, BIND_SLOTS, BIND_RUN_TASKS = "bench_bind", 8, 5


def overclaim_phase(schedulers: int) -> dict:
    """Binding limits under racing schedulers: two runs share an 8-slot pool, one run capped at 5 active tasks.

    N scheduler threads run passes until claims stop; an over-claim is a try claimed beyond a limit (the pool's
    8 slots, or 5 for the capped run). The pool must also fill: the limits bind, they do not starve.
    """
    from airflow.sdk import DAG, task
    from tests.functional.scheduling.harness import Clock, make_store, store_dags
    from updraft.executors.recording import RecordingExecutor
    from updraft.scheduling import Scheduler, SchedulerConfig
    from updraft.scheduling.commands import trigger_dag

    store, clock = make_store(f"bench-bind-{time.monotonic_ns()}"), Clock()
    store.set_pool(BIND_POOL, BIND_SLOTS)
    dags = []
    for dag_id, max_active_tasks in (("bind_capped", BIND_RUN_TASKS), ("bind_open", 64)):
        with DAG(dag_id, schedule=None, start_date=dt.datetime(2024, 1, 1, tzinfo=dt.UTC),
                 max_active_tasks=max_active_tasks) as dag:
            for i in range(24):
                task(lambda: None, task_id=f"t{i:02d}", pool=BIND_POOL)()
        dags.append(dag)
    store_dags(store, *dags, now=clock())
    for dag in dags:
        trigger_dag(store, dag.dag_id, now=clock())
    executor = RecordingExecutor()

    def loop() -> None:
        scheduler = Scheduler(store, executor, SchedulerConfig(), clock=clock)
        for _ in range(5):
            scheduler.run_pass()

    threads = [threading.Thread(target=loop) for _ in range(schedulers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    claimed = collections.Counter(d.key.dag_id for d in executor.dispatched)
    over = max(0, sum(claimed.values()) - BIND_SLOTS) + max(0, claimed["bind_capped"] - BIND_RUN_TASKS)
    return {"over_claims": over, "pool_filled": sum(claimed.values()) == BIND_SLOTS}


def full_run(width: int, counter: RequestCounter) -> dict:
    from tests.functional.scheduling.harness import Workers, scheduler_for

    store, clock, run = _setup(width)
    scheduler, executor = scheduler_for(store, clock, parallelism=width * 2)
    counter.take()
    scheduler.run_pass()
    after_pass = counter.take()
    workers = Workers(store, scheduler, executor, clock)
    workers.run_to_end("bench_fanout", run.run_id)
    rest = counter.take()
    total = after_pass + rest
    return {"requests_total": sum(total.values()), "per_task": sum(total.values()) / width,
            "first_pass_per_task": sum(after_pass.values()) / width, "by_operation": dict(total)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from moto import mock_aws

    counter = RequestCounter()
    results: dict = {"tasks": args.tasks, "levels": {}}
    with mock_aws():
        for level in LEVELS:
            samples = [claim_phase(args.tasks, level, counter) for _ in range(args.repeat)]
            results["levels"][level] = {
                "claims_per_s": statistics.median(s["claims_per_s"] for s in samples),
                "wall_s": statistics.median(s["wall_s"] for s in samples),
                "double_dispatches": max(s["double_dispatches"] for s in samples),
                "requests_per_claim": statistics.median(s["requests"] / args.tasks for s in samples),
            }
            bound = [overclaim_phase(level) for _ in range(args.repeat)]
            results["levels"][level]["over_claims"] = max(b["over_claims"] for b in bound)
            results["levels"][level]["binding_limits_filled"] = all(b["pool_filled"] for b in bound)
            print(f"{level} schedulers: {results['levels'][level]}", file=sys.stderr)
        results["full_run"] = full_run(args.tasks, counter)

    load = os.getloadavg()
    print(f"\nScheduler benchmark: {args.tasks} independent tasks, moto in-process (serialized), "
          f"median of {args.repeat}; load average {load[0]:.2f}\n")
    print("| schedulers | claims/s | wall to claim all | double dispatches | over-claims (8-slot pool, run capped "
          "at 5) | DynamoDB requests per claimed task |")
    print("|---|---|---|---|---|---|")
    for level, row in results["levels"].items():
        filled = "" if row["binding_limits_filled"] else " (pool not filled!)"
        print(f"| {level} | {row['claims_per_s']:.0f} | {row['wall_s']:.2f} s | {row['double_dispatches']} | "
              f"{row['over_claims']}{filled} | {row['requests_per_claim']:.2f} |")
    full = results["full_run"]
    print(f"\nFull run (claims + worker start/finish + mini scheduler): {full['per_task']:.2f} requests per task "
          f"({full['requests_total']} total); scheduler pass alone: {full['first_pass_per_task']:.2f} per task.")
    print("By operation:", ", ".join(f"{k} {v}" for k, v in sorted(full["by_operation"].items())))
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "scheduler.json").write_text(json.dumps(results, indent=2, default=str))
    print(f"\nwritten: {out / 'scheduler.json'}")


if __name__ == "__main__":
    main()
