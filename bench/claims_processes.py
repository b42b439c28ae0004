"""Claims per second against schedulers, each scheduler in a process of its own, as deployed schedulers are.

usage: python bench/claims_processes.py [--tasks 100] [--levels 1,2,4,8] [--repeat 1] [--no-latency] [--events]
       [--apart] [--shares]

``latency_bench.py --only claims`` runs every scheduler as a thread of one interpreter beside moto, so one
interpreter's CPU bounds it from the first scheduler on (its ``CPU busy`` column): it cannot show what a second
scheduler adds. Here the embedded AWS is a server (``EmbeddedAwsServer``: per-item atomic, every DynamoDB request
waiting AWS's latency from ``updraft.local.latency``, served by this process, which does nothing else) and each
scheduler is a process with its own interpreter, its own store and its own ``LambdaExecutor`` whose async
``Invoke`` waits the Invoke call's latency (the tries are not run: this measures claims). One run of ``--tasks``
independent tasks; limits do not bind; the schedulers start together and run passes until every try is
dispatched; a pass that claimed nothing waits 50 ms before the next (a deployed scheduler's invocation would
end and the next event start one) instead of reading the run again at once. claims/s = tasks / wall time.
Double dispatches are counted (must be 0). ``--events``: each scheduler's passes are the scheduler Lambda's
answer to a task-finished event (``schedule_run`` of the one run: no due DAGs, active runs, reconciliation),
as concurrent schedulers meet in a deployment (ticks come once a minute; ends of tries come together); without
it, every pass is a tick's full ``run_pass``. ``--apart`` (with ``--events``): an environment's claims rather than
one run's: each scheduler answers the events of a run of its own (``--tasks`` each, one run per scheduler), as
schedulers answering different runs' ends do, and claims/s counts every run's tries. ``--shares``: one run's
claim shared (``scheduling.claim_shares``): the first scheduler answers the run's event once, cutting its claim
into as many shares as there are schedulers and asking each other scheduler for one (the ask waits the Invoke
call's latency, as the async invoke that starts a scheduler invocation does); each other scheduler answers one
ask, as that invocation would, and every scheduler makes exactly one pass. Each has the run's DAG version loaded
before the clock starts, as a warm scheduler container has (a cold one adds ~0.2 s of CPU at 1,000 tasks).

The embedded AWS is still one interpreter serving every request, so on this 2-core machine it bounds the
measured claims/s from about two schedulers on (the table gives the load average beside the figures). So the
table also *projects* each level onto AWS, where each scheduler is a Lambda with its own CPU and DynamoDB's
partitions do not queue these rates: the schedulers' work is the mean AWS latency of the requests they made (by
operation, from the latency profile), plus their invokes' (a pass sends them from ``INVOKE_CONCURRENCY`` threads
while it goes on claiming, so they are charged that many at once), plus their own CPU time (measured in their
processes), split over N schedulers working at once: claims/s = tasks x N / that. It counts every request one
after another, as if no claim overlapped its writes or its invokes, so it is a lower bound for a given request
count; what more schedulers cost shows in it as the requests and CPU per claim they add (lost races, re-reads).
The work's three parts are reported per claim (``work_ms_per_claim``) to say which one bounds the projection.
Beside it, *overlapped*: the invokes' threads run beside the pass's own requests and CPU, so the work is the
larger of the two (an upper bound for the same counts).
A scheduler process that fails reports its error, which the level raises.
Prints a markdown table and writes bench/results/claims_processes.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import multiprocessing
import os
import statistics
import sys
import time
from typing import Any

from latency_bench import ROOT  # puts the repository on sys.path and sets the benchmarks' AWS defaults

from updraft.scheduling.claim_shares import SHARE_MIN
from updraft.scheduling.pass_invokes import INVOKE_CONCURRENCY

TABLE = "claims-processes"  # one table per level: moto's state outlives a server in this process
IDLE_WAIT_S = 0.05


class _CountingLambda:
    """The Lambda client a scheduler process invokes: each async invoke waits the Invoke call's latency and
    counts in the count shared by every process."""

    def __init__(self, latency: Any, invokes: Any) -> None:
        self.latency = latency
        self.invokes = invokes
        self.mine = 0  # this process's invokes

    def invoke(self, *, FunctionName: str, InvocationType: str, Payload: bytes, **_: Any) -> dict[str, Any]:
        if self.latency is not None:
            time.sleep(self.latency.invoke_api())
        with self.invokes.get_lock():
            self.invokes.value += 1
        self.mine += 1
        return {"StatusCode": 202}


def _scheduler_process(url: str, table: str, width: int, invokes: Any, ready: Any, latency_on: bool, seed: int,
                       out: Any, run: tuple[str, str] | None, apart: bool, parallelism: int,
                       shares: tuple[int, int, Any] | None = None) -> None:
    """Passes until ``width`` tries are dispatched: by every scheduler, or (``apart``) by this one. ``shares``
    (this scheduler's number, the queue of asks): number 0 answers the run's event once, sharing its claim
    among the schedulers (``claim_shares``, at most as many shares as schedulers); each other one answers one
    ask, as the scheduler invocation an async invoke starts would."""
    from updraft.executors.lambda_ import LambdaExecutor
    from updraft.local.latency import AWS, LatencySource
    from updraft.scheduling import Scheduler, SchedulerConfig
    from updraft.store.config import StoreConfig
    from updraft.store.dynamo import DynamoStore

    store = DynamoStore(StoreConfig(table_name=table, region="us-east-1", host=url))
    latency = LatencySource(AWS, seed=seed) if latency_on else None
    counting = _CountingLambda(latency, invokes)
    executor = LambdaExecutor(counting, "updraft-bench-worker")  # type: ignore[arg-type]
    scheduler = Scheduler(store, executor, SchedulerConfig(parallelism=parallelism),
                          clock=lambda: dt.datetime.now(dt.UTC))
    if shares is not None:
        from updraft.scheduling import claim_shares

        number, schedulers, asks = shares
        claim_shares.MAX_SHARES = schedulers  # this level's shares, all of the same size (width // SHARE_MIN >= 8)

        def ask(dag_id: str, run_id: str, share: Any) -> None:
            if latency is not None:
                time.sleep(latency.invoke_api())  # the async invoke that starts the share's invocation
            asks.put((dag_id, run_id, share.to_detail()))

        scheduler.claims.ask_share = ask
        assert run is not None
        # A warm container's cache of the DAG version (a cold one reads and builds it: ~0.2 s of CPU at 1,000 tasks).
        scheduler.dag(run[0], store.get_run(*run).dag_hash)  # type: ignore[union-attr]
    ready.wait()
    cpu, passes = time.process_time(), 0
    try:
        if shares is not None:
            if number == 0:
                assert run is not None
                scheduler.schedule_run(*run)
            else:
                dag_id, run_id, detail = asks.get(timeout=600)
                scheduler.schedule_run(dag_id, run_id, share=claim_shares.Share.from_detail(detail))
            passes = 1
        while shares is None and (counting.mine if apart else invokes.value) < width and passes < 2000:
            before = invokes.value
            if run is None:
                scheduler.run_pass()
            else:
                scheduler.schedule_run(*run)
            passes += 1
            if invokes.value == before:
                time.sleep(IDLE_WAIT_S)
    except Exception as exc:  # reported to the level, which raises it: a bench waiting on a dead process hangs
        out.put({"error": f"{type(exc).__name__}: {exc}"})
        raise
    out.put({"passes": passes, "cpu_s": time.process_time() - cpu})


def projection(requests: dict[str, int], invokes: int, cpu_s: float, width: int, schedulers: int) -> dict[str, Any]:
    """Claims/s on AWS for ``width`` claims that took ``requests`` (by operation), ``invokes`` and ``cpu_s`` of the
    schedulers' CPU, shared by ``schedulers`` working at once: serially (every request, then the invokes at
    ``INVOKE_CONCURRENCY`` at once, then the CPU) and overlapped (the invokes beside the requests and CPU)."""
    from updraft.local.latency import AWS

    work = {"requests": sum(n * AWS.dynamo(op).mean_s for op, n in requests.items() if op != "other"),
            "invokes": invokes * AWS.lambda_invoke_api.mean_s / INVOKE_CONCURRENCY, "cpu": cpu_s}
    return {"projected_claims_per_s": width * schedulers / sum(work.values()),
            "projected_overlapped_claims_per_s": width * schedulers / max(work["requests"] + work["cpu"],
                                                                          work["invokes"]),
            "work_ms_per_claim": {part: round(1000 * seconds / width, 2) for part, seconds in work.items()}}


def one_level(width: int, schedulers: int, latency_on: bool, events: bool = False,
              apart: bool = False, shared: bool = False) -> dict[str, Any]:
    from scheduler_bench import _dag

    from tests.functional.scheduling.harness import store_dags
    from updraft.local.latency import AWS, LatencySource
    from updraft.local.moto_server import EmbeddedAwsServer
    from updraft.scheduling.commands import trigger_dag
    from updraft.store.config import StoreConfig
    from updraft.store.dynamo import DynamoStore
    from updraft.store.tables import create_table

    with EmbeddedAwsServer(concurrent=True, latency=LatencySource(AWS) if latency_on else None) as server:
        # A fresh table: the earlier levels' tries (queued, never run) would otherwise hold the pool's slots.
        table = f"{TABLE}-{schedulers}-{time.monotonic_ns()}"
        config = StoreConfig(table_name=table, region="us-east-1", host=server.url)
        create_table(config)
        store = DynamoStore(config)
        now = dt.datetime.now(dt.UTC)
        total = width * (schedulers if apart else 1)
        store.set_pool("default_pool", total * 2)  # limits must not bind: this measures the claim path itself
        store_dags(store, _dag(width), now=now)
        runs = [trigger_dag(store, "bench_fanout", now=now, run_id=f"bench_{n}")
                for n in range(schedulers if apart else 1)]
        ctx = multiprocessing.get_context("spawn")
        invokes, ready, out, asks = ctx.Value("i", 0), ctx.Barrier(schedulers + 1), ctx.Queue(), ctx.Queue()
        processes = [ctx.Process(target=_scheduler_process,
                                 args=(server.url, table, width, invokes, ready, latency_on, 19 + n, out,
                                       (runs[n % len(runs)].dag_id, runs[n % len(runs)].run_id) if events else None,
                                       apart, total * 2,
                                       (n, schedulers, asks) if shared and schedulers > 1 else None))
                     for n in range(schedulers)]
        for process in processes:
            process.start()
        ready.wait()  # every scheduler imported and built: the clock starts
        server.guard.take_counts()
        started = time.monotonic()
        reports = [out.get(timeout=1800) for _ in processes]
        wall = time.monotonic() - started
        for process in processes:
            process.join(timeout=60)
        requests = server.guard.take_counts()
    errors = [r["error"] for r in reports if "error" in r]
    if errors:
        raise RuntimeError(f"{len(errors)} of {schedulers} scheduler processes failed: {errors[0]}")
    return {"wall_s": wall, "claims_per_s": total / wall, "invokes": invokes.value,
            **projection(requests, invokes.value, sum(r["cpu_s"] for r in reports), total, schedulers),
            "double_dispatches": invokes.value - total, "requests": sum(requests.values()),
            "requests_per_claim": sum(requests.values()) / total, "by_operation": dict(requests),
            "passes": sum(r["passes"] for r in reports),
            "scheduler_cpu_per_claim_ms": 1000 * sum(r["cpu_s"] for r in reports) / total,
            "load": os.getloadavg()[0]}


def _work(runs: list[dict[str, Any]]) -> str:
    """The projection's work per claim, each part's median over ``runs``: requests / invokes / CPU."""
    parts = [statistics.median(r["work_ms_per_claim"][part] for r in runs) for part in ("requests", "invokes", "cpu")]
    return " / ".join(f"{part:.1f}" for part in parts) + " ms"


def render(results: dict[int, list[dict[str, Any]]], width: int, latency_on: bool, events: bool = False,
           apart: bool = False, shared: bool = False) -> str:
    repeats = len(next(iter(results.values())))
    passes = "task-finished events (schedule_run)" if events else "ticks (run_pass)"
    if shared:
        passes = "one task-finished event whose claim is shared among them (claim_shares)"
    over = f"a run of {width} tasks per scheduler" if apart else f"one run of {width} tasks"
    lines = [f"Claims over {over}, each scheduler its own process, its passes {passes} "
             f"({'AWS latency profile' if latency_on else 'no latency'}; medians of {repeats}):",
             "",
             "| schedulers | claims/s measured | projected on AWS (overlapped) | wall to claim all | double dispatches "
             "| DynamoDB requests per claim | scheduler passes | schedulers' CPU per claim "
             "| projected work per claim: requests / invokes / CPU | load average |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for level, runs in results.items():
        def median(field: str, runs: list[dict[str, Any]] = runs) -> float:
            return float(statistics.median(r[field] for r in runs))
        lines.append(f"| {level} | {median('claims_per_s'):.1f} | {median('projected_claims_per_s'):.1f} "
                     f"({median('projected_overlapped_claims_per_s'):.1f}) | "
                     f"{median('wall_s'):.2f} s | "
                     f"{max(r['double_dispatches'] for r in runs)} | {median('requests_per_claim'):.2f} | "
                     f"{median('passes'):.0f} | {median('scheduler_cpu_per_claim_ms'):.0f} ms | "
                     f"{_work(runs)} | "
                     f"{median('load'):.1f} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--levels", default="1,2,4,8")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--no-latency", action="store_true")
    parser.add_argument("--events", action="store_true", help="passes answer task-finished events, not ticks")
    parser.add_argument("--apart", action="store_true", help="with --events: a run of --tasks per scheduler")
    parser.add_argument("--shares", action="store_true",
                        help="one event, its claim shared among the schedulers (--tasks >= 800)")
    args = parser.parse_args()
    if args.apart and not args.events:
        parser.error("--apart needs --events: a tick's pass reads every run")
    if args.shares and (args.apart or args.tasks < 8 * SHARE_MIN):
        parser.error(f"--shares shares one run's claim: not with --apart, and --tasks >= {8 * SHARE_MIN}")
    latency_on = not args.no_latency
    results: dict[int, list[dict[str, Any]]] = {}
    for _ in range(args.repeat):
        for level in (int(n) for n in args.levels.split(",")):
            result = one_level(args.tasks, level, latency_on, args.events or args.shares, args.apart, args.shares)
            print(f"{level} schedulers: {result['claims_per_s']:.1f} claims/s, "
                  f"{result['requests_per_claim']:.2f} requests per claim", file=sys.stderr, flush=True)
            results.setdefault(level, []).append(result)
    print(render(results, args.tasks, latency_on, args.events, args.apart, args.shares))
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "claims_processes.json").write_text(json.dumps({str(k): v for k, v in results.items()}, indent=1))
    return 0 if all(r["double_dispatches"] == 0 for runs in results.values() for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
