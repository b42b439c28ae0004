"""Latency-true benchmark: claims/s for 1, 2, 4, 8 schedulers, hop latency and fan-out wall time, as on AWS.

usage: python bench/latency_bench.py [--tasks 200] [--repeat 3] [--only claims,chain,fanout] [--no-latency]
       [--loop back-to-back|event] [--caps 32,200] [--no-conflicts]

Runs in one process on moto guarded by ``updraft.local.concurrent_moto``: DynamoDB requests to different items
run at the same time, each item stays atomic, and every request waits a delay drawn from
``updraft.local.latency.AWS`` (DynamoDB p50 4-6 ms, p99 10-15 ms; Lambda's async Invoke call p50 15 ms and its
event -> warm handler p50 25 ms). So the figures are what the protocol's round trips cost on AWS, plus moto's own
CPU time on this machine (reported beside them as the load average: on a busy 2-core machine that part grows).

- claims: one run of ``--tasks`` independent tasks; N scheduler threads run passes until every try is claimed
  and dispatched through the real ``LambdaExecutor`` (each invoke waits the Invoke call's latency); claims/s =
  tasks / wall time. Limits do not bind. Double dispatches are counted (must be 0). ``--loop event``: a
  scheduler whose pass claimed nothing waits for the tick (when all wait) instead of reading the run again at
  once. The process's CPU time per claim is reported beside: every scheduler, request and moto share one
  interpreter lock, so claims/s can never pass 1 / (CPU per claim), however many schedulers run.
- chain: a 20-task chain run to the end by Lambda as a thread per invoke (start, no-op, finish, mini
  scheduler, as the worker Lambda does), started ``event -> handler`` after each invoke; hop = task N's end ->
  task N+1's start, from the store's timestamps.
- fanout: 1 -> ``--tasks`` -> 1 at max_active_tasks 32 (Airflow's baseline: 28.6 s) and at ``--tasks`` (Lambda
  scaling out): trigger -> run finished, the most worker invocations in flight at once (a try gives its
  slot back at its finish, before its mini scheduler ends, so this may exceed max_active_tasks), and from the
  root's end (the store's timestamps) to the last middle started, to the last middle ended and to the run's end.
  Lambda's own scale-out (1,000 new execution environments per 10 s) is not modelled: every invoke runs at once.
``--no-conflicts``: a transaction meeting another's items waits for them (as one item's writes do) instead of
being refused as DynamoDB refuses it (``TransactionConflict``): what the protocol would do if every conflict were
retried until it landed.
Prints a markdown table and writes bench/results/latency.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
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
sys.path.insert(0, str(ROOT / "bench"))
for _name, _value in {"AWS_DEFAULT_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "bench",
                      "AWS_SECRET_ACCESS_KEY": "bench"}.items():
    os.environ.setdefault(_name, _value)

LEVELS = (1, 2, 4, 8)
FUNCTION = "updraft-bench-worker"


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class LatencyLambda:
    """The Lambda client the executor invokes: each async invoke waits the Invoke call's latency, then hands the
    payload to ``on_event`` after the event -> handler delay (on a timer thread, as Lambda runs it elsewhere)."""

    def __init__(self, latency: Any, on_event: Any = None) -> None:
        self.latency = latency
        self.on_event = on_event
        self.invokes = 0
        self._lock = threading.Lock()

    def invoke(self, *, FunctionName: str, InvocationType: str, Payload: bytes, **_: Any) -> dict[str, Any]:
        if self.latency is not None:
            time.sleep(self.latency.invoke_api())
        with self._lock:
            self.invokes += 1
        if self.on_event is not None:
            delay = self.latency.event_to_start() if self.latency is not None else 0.0
            threading.Timer(delay, self.on_event, args=(json.loads(Payload),)).start()
        return {"StatusCode": 202}


def _refused(guard: Any) -> int:
    """Transactions and writes the embedded AWS refused so far for meeting a transaction's items (0 when its
    conflicts are not emulated)."""
    return sum(guard.conflicts.refused.values()) if guard.conflicts is not None else 0


def claims(width: int, schedulers: int, latency: Any, guard: Any, *, event_driven: bool = False) -> dict[str, Any]:
    from scheduler_bench import _setup, race_schedulers

    from updraft.executors.lambda_ import LambdaExecutor
    from updraft.scheduling import Scheduler, SchedulerConfig

    store, clock, _run = _setup(width)
    client = LatencyLambda(latency)
    executor = LambdaExecutor(client, FUNCTION)  # type: ignore[arg-type]
    config = SchedulerConfig(parallelism=width * 2)
    guard.take_counts()
    guard.lock_waits.clear()
    refused = _refused(guard)
    cpu = time.process_time()
    wall = race_schedulers(schedulers, lambda: Scheduler(store, executor, config, clock=clock),
                           lambda: client.invokes >= width, event_driven=event_driven)
    cpu = time.process_time() - cpu
    requests = guard.take_counts()
    return {"wall_s": wall, "claims_per_s": width / wall, "invokes": client.invokes, "cpu_s": cpu,
            "double_dispatches": client.invokes - width, "requests": sum(requests.values()),
            "conflicts_refused": _refused(guard) - refused,
            "lock_wait_s": sum(guard.lock_waits.values()), "by_operation": dict(requests),
            "lock_wait_by_operation": {op: round(s, 2) for op, s in guard.lock_waits.items()}}


class LambdaWorld:
    """Schedulers and worker Lambdas as threads over the guarded moto: every invoke becomes a thread that runs the
    try as the worker handler does (``LambdaWorkers``: start, no-op, ``report_try`` with its mini scheduler
    dispatching the next tries), in a warm environment when one is idle."""

    def __init__(self, store: Any, latency: Any, parallelism: int) -> None:
        from tests.functional.scheduling.harness import LambdaWorkers
        from updraft.executors.base import Dispatch
        from updraft.executors.lambda_ import LambdaExecutor
        from updraft.scheduling import Scheduler, SchedulerConfig

        self._dispatch = Dispatch
        self.client = LatencyLambda(latency, self._on_event)
        self.executor = LambdaExecutor(self.client, FUNCTION)  # type: ignore[arg-type]
        self.config = SchedulerConfig(parallelism=parallelism)
        self.store = store
        self._scheduler = Scheduler
        self._workers = LambdaWorkers
        self._lock = threading.Lock()
        self.running = self.peak = 0
        self._idle: list[Any] = []  # warm environments between invocations
        self.environments = 0  # started
        self.errors: list[BaseException] = []

    def scheduler(self) -> Any:
        return self._scheduler(self.store, self.executor, self.config, clock=_now)

    def _on_event(self, payload: dict[str, Any]) -> None:
        # An idle warm environment takes the event, as Lambda reuses one, else a new one starts: each keeps its
        # Scheduler (the worker's ``Services.scheduler``) and what it remembers across invocations.
        with self._lock:
            self.running += 1
            self.peak = max(self.peak, self.running)
            environment = self._idle.pop() if self._idle else None
        try:
            if environment is None:
                environment = self._workers(self.store, self.scheduler(), self.executor, _now)
                with self._lock:
                    self.environments += 1
            environment.run_one(self._dispatch.from_payload(payload))
        except BaseException as exc:
            self.errors.append(exc)
        finally:
            with self._lock:
                self.running -= 1
                if environment is not None:
                    self._idle.append(environment)


def run_dag(dag: Any, latency: Any, guard: Any, parallelism: int) -> dict[str, Any]:
    from tests.functional.scheduling.harness import make_store, store_dags
    from updraft.scheduling.commands import trigger_dag

    store = make_store(f"bench-lat-{time.monotonic_ns()}")
    store.set_pool("default_pool", parallelism)
    store_dags(store, dag, now=_now())
    world = LambdaWorld(store, latency, parallelism)
    guard.take_counts()
    refused = _refused(guard)
    started, cpu = time.perf_counter(), time.process_time()
    run = trigger_dag(store, dag.dag_id, now=_now())
    world.scheduler().schedule_run(dag.dag_id, run.run_id)  # the trigger's nudge: one scheduler invoke
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and not world.errors:
        finished = store.get_run(dag.dag_id, run.run_id)
        if finished.state.value in ("success", "failed"):
            break
        time.sleep(0.05)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    if world.errors:
        raise world.errors[0]
    tis = store.get_run_tis(dag.dag_id, run.run_id)
    requests = guard.take_counts()
    return {"state": finished.state.value, "wall_s": wall, "tasks": len(tis), "peak_running": world.peak,
            "environments": world.environments, "requests_per_task": sum(requests.values()) / len(tis),
            "by_operation": dict(requests), "tis": tis, "run_end": finished.end_date,
            "conflicts_refused": _refused(guard) - refused, "cpu_busy": cpu / wall}


def fanout_timeline(result: dict[str, Any]) -> dict[str, Any]:
    """A fan-out run's result with its times from the root's end (task ``first``): to the last middle started,
    to the last middle ended and to the run's end, in seconds, from the store's timestamps (None where a middle
    never started or the run has no end)."""
    tis = result.pop("tis")
    run_end = result.pop("run_end")
    root = next(ti for ti in tis if ti.key.task_id == "first")
    middles = [ti for ti in tis if ti.key.task_id not in ("first", "last")]

    def since_root(moment: dt.datetime | None) -> float | None:
        return None if moment is None or root.end_date is None else (moment - root.end_date).total_seconds()

    starts = [ti.start_date for ti in middles]
    ends = [ti.end_date for ti in middles]
    return {**result,
            "root_end_to_last_middle_started_s": since_root(max(starts) if None not in starts else None),
            "root_end_to_last_middle_ended_s": since_root(max(ends) if None not in ends else None),
            "root_end_to_run_end_s": since_root(run_end)}


def _chain_dag() -> Any:
    from airflow.sdk import DAG, chain, task

    with DAG("lat_chain20", schedule=None, start_date=dt.datetime(2024, 1, 1, tzinfo=dt.UTC)) as dag:
        chain(*[task(lambda: None, task_id=f"t{i:02d}")() for i in range(20)])
    return dag


def _fanout_dag(width: int, max_active_tasks: int) -> Any:
    from airflow.sdk import DAG, task

    with DAG(f"lat_fanout_{max_active_tasks}", schedule=None, start_date=dt.datetime(2024, 1, 1, tzinfo=dt.UTC),
             max_active_tasks=max_active_tasks) as dag:
        first = task(lambda: None, task_id="first")()
        last = task(lambda: None, task_id="last")()
        for i in range(width):
            first >> task(lambda: None, task_id=f"m{i:03d}")() >> last
    return dag


def chain_hops(result: dict[str, Any]) -> dict[str, Any]:
    result.pop("run_end")
    ordered = sorted(result.pop("tis"), key=lambda ti: ti.key.task_id)
    hops = [(b.start_date - a.end_date).total_seconds() * 1000 for a, b in itertools.pairwise(ordered)]
    return {**result, "median_hop_ms": statistics.median(hops), "max_hop_ms": max(hops)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default="claims,chain,fanout")
    parser.add_argument("--no-latency", action="store_true", help="the same on the concurrent moto, no delays")
    parser.add_argument("--loop", choices=("back-to-back", "event"), default="back-to-back",
                        help="claims: a scheduler whose pass found nothing runs the next at once, or waits for the "
                             "tick (as deployed: every scheduler waiting)")
    parser.add_argument("--caps", default=None, help="fanout: the max_active_tasks to run at (default 32,TASKS)")
    parser.add_argument("--no-conflicts", action="store_true",
                        help="transactions wait for each other's items instead of being refused")
    args = parser.parse_args()
    only = set(args.only.split(","))
    caps = [int(cap) for cap in args.caps.split(",")] if args.caps else [32, args.tasks]

    from moto import mock_aws

    from updraft.local import moto_speedups
    from updraft.local.concurrent_moto import ConcurrentMoto
    from updraft.local.latency import AWS, LatencySource

    moto_speedups.apply()
    latency = None if args.no_latency else LatencySource(AWS)
    load_before = round(os.getloadavg()[0], 2)
    results: dict[str, Any] = {"tasks": args.tasks, "repeat": args.repeat, "latency": not args.no_latency,
                               "loop": args.loop, "conflicts": not args.no_conflicts}
    conflicts = False if args.no_conflicts else None
    with mock_aws(), ConcurrentMoto(latency, conflicts=conflicts).in_process() as guard:
        if "claims" in only:
            results["claims"] = {}
            for level in LEVELS:
                samples = [claims(args.tasks, level, latency, guard, event_driven=args.loop == "event")
                           for _ in range(args.repeat)]
                results["claims"][level] = {
                    "claims_per_s": statistics.median(s["claims_per_s"] for s in samples),
                    "wall_s": statistics.median(s["wall_s"] for s in samples),
                    "double_dispatches": max(s["double_dispatches"] for s in samples),
                    "requests_per_claim": statistics.median(s["requests"] / args.tasks for s in samples),
                    "lock_wait_s": statistics.median(s["lock_wait_s"] for s in samples),
                    "conflicts_refused": statistics.median(s["conflicts_refused"] for s in samples),
                    "cpu_per_claim_ms": statistics.median(s["cpu_s"] * 1000 / args.tasks for s in samples),
                    "cpu_busy": statistics.median(s["cpu_s"] / s["wall_s"] for s in samples),
                    "by_operation": samples[0]["by_operation"],
                    "lock_wait_by_operation": samples[0]["lock_wait_by_operation"]}
                print(f"{level} schedulers: {results['claims'][level]}", file=sys.stderr, flush=True)
        if "chain" in only:
            runs = [chain_hops(run_dag(_chain_dag(), latency, guard, 32)) for _ in range(args.repeat)]
            results["chain"] = _median_of(runs, ("wall_s", "median_hop_ms", "max_hop_ms", "requests_per_task",
                                                 "conflicts_refused", "cpu_busy"))
            print(f"chain: {results['chain']}", file=sys.stderr, flush=True)
        if "fanout" in only:
            for cap in caps:
                runs = [fanout_timeline(run_dag(_fanout_dag(args.tasks, cap), latency, guard, cap))
                        for _ in range(args.repeat)]
                results[f"fanout_{cap}"] = _median_of(runs, ("wall_s", "peak_running", "requests_per_task",
                                                             "conflicts_refused", "cpu_busy", *TIMELINE))
                print(f"fan-out at {cap}: {results[f'fanout_{cap}']}", file=sys.stderr, flush=True)
    results["load"] = [load_before, round(os.getloadavg()[0], 2)]
    print(render(results, args.tasks, caps))
    out = ROOT / "bench" / "results" / "latency.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2, default=str))
    print(f"\nraw results: {out.relative_to(ROOT)}")
    return 0


TIMELINE = ("root_end_to_last_middle_started_s", "root_end_to_last_middle_ended_s", "root_end_to_run_end_s")


def _median_of(runs: list[dict[str, Any]], fields: tuple[str, ...]) -> dict[str, Any]:
    """Each field's median over ``runs`` (None if a run has none), and the runs' states."""
    def median(field: str) -> Any:
        values = [r[field] for r in runs]
        return None if None in values else statistics.median(values)
    return {**{f: median(f) for f in fields}, "states": [r["state"] for r in runs]}


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} s"


def render(results: dict[str, Any], tasks: int, caps: list[int]) -> str:
    mode = "AWS latency profile" if results["latency"] else "no added latency"
    if not results["conflicts"]:
        mode += "; conflicting transactions wait, not refused"
    lines = [f"Latency-true embedded AWS ({mode}; concurrent moto, per-item atomic), median of {results['repeat']}; "
             f"load average {results['load'][0]} before, {results['load'][1]} after; {os.cpu_count()} CPUs", ""]
    if "claims" in results:
        lines += [f"Claims of {tasks} independent tasks, dispatched through LambdaExecutor, schedulers looping "
                  f"{results['loop']}:", "",
                  "| schedulers | claims/s | wall to claim all | double dispatches | DynamoDB requests per claim "
                  "| time requests waited for item locks (all threads) | CPU per claim (this process) | CPU busy |",
                  "|---|---|---|---|---|---|---|---|"]
        for level, row in results["claims"].items():
            lines.append(f"| {level} | {row['claims_per_s']:.1f} | {row['wall_s']:.2f} s | {row['double_dispatches']} "
                         f"| {row['requests_per_claim']:.2f} | {row['lock_wait_s']:.2f} s "
                         f"| {row['cpu_per_claim_ms']:.0f} ms | {row['cpu_busy']:.0%} |")
        lines.append("")
    rows = []
    if "chain" in results:
        c = results["chain"]
        rows.append(f"| chain of 20 | {c['wall_s']:.2f} s | median hop {c['median_hop_ms']:.0f} ms (max "
                    f"{c['max_hop_ms']:.0f}) | {c['requests_per_task']:.1f} | {c['cpu_busy']:.0%} "
                    f"| {', '.join(c['states'])} |")
    for cap in caps:
        key, label = f"fanout_{cap}", f"fan-out 1 -> {tasks} -> 1, max_active_tasks {cap}"
        if cap == 32 and tasks == 200:
            label += " (Airflow: 28.6 s)"
        if key in results:
            f = results[key]
            rows.append(f"| {label} | {f['wall_s']:.2f} s | {f['peak_running']:.0f} worker invocations in flight "
                        f"at peak; root's end -> last middle started {_seconds(f.get(TIMELINE[0]))}, -> last "
                        f"middle ended {_seconds(f.get(TIMELINE[1]))}, -> run's end {_seconds(f.get(TIMELINE[2]))} "
                        f"| {f['requests_per_task']:.1f} | {f['cpu_busy']:.0%} | {', '.join(f['states'])} |")
    if rows:
        # CPU busy: this interpreter's CPU over the wall time. Near 100 %, its one GIL (moto's work for every
        # request, every environment's Python) bounds the run, not AWS's latencies or conflicts.
        lines += ["| run | trigger -> done | shape | DynamoDB requests per task | CPU busy (this process) | states |",
                  "|---|---|---|---|---|---|", *rows]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
