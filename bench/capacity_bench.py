"""Capacity model (issue 19): every DynamoDB request of six scenarios, charged by DynamoDB's published rules.

usage: python bench/capacity_bench.py [--scale 1.0] [--only chain20,fanout,...]

Scenarios run the real scheduler, claims and try lifecycle on the embedded AWS (moto in-process, one request
at a time), with no-op tasks played by the scheduling tests' workers (start, finish, then the mini scheduler, as
the worker Lambda does). Every request is recorded and charged (``bench/capacity_recorder.py``), and the
figures follow (``bench/capacity_model.py``): requests and units per task, the hottest partition key, the
ceiling in task starts per second, and dollars per 1,000 tasks. Where moto is too slow for the full size the
scenario runs at two smaller sizes and its per-task figures are extrapolated to the full size (a row says so).
Prints a markdown table and writes bench/results/capacity.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "shared")]
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
os.environ.setdefault("AWS_ACCESS_KEY_ID", "bench")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench")

from bench.capacity_model import REFERENCE_STARTS_PER_S, Figures, extrapolate, figures  # noqa: E402
from bench.capacity_recorder import CapacityRecorder, role  # noqa: E402

START = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


@dataclasses.dataclass
class Setup:
    """A store with the scenario's DAGs registered and runs triggered, and the scheduler that drives them."""

    store: object
    clock: object
    scheduler: object
    executor: object
    runs: list


def _setup(name: str, dags: list, *, parallelism: int, pools: dict[str, int], runs_per_dag: int = 1) -> Setup:
    from tests.functional.scheduling.harness import Clock, make_store, scheduler_for, store_dags
    from updraft.scheduling.commands import trigger_dag

    store = make_store(f"capacity-{name}-{time.monotonic_ns()}")
    clock = Clock()
    for pool, slots in pools.items():
        store.set_pool(pool, slots)
    store_dags(store, *dags, now=clock())
    runs = [trigger_dag(store, d.dag_id, now=clock(), run_id=f"r{i}") for d in dags for i in range(runs_per_dag)]
    scheduler, executor = scheduler_for(store, clock, parallelism=parallelism)
    return Setup(store, clock, scheduler, executor, runs)


def _finished(setup: Setup) -> bool:
    from updraft.model.states import FINISHED_RUN_STATES

    return all(setup.store.get_run(r.dag_id, r.run_id).state in FINISHED_RUN_STATES for r in setup.runs)


def lambda_workers(setup: Setup) -> object:
    """The scheduling tests' workers, each try played as the worker Lambda plays it (no task code)."""
    from tests.functional.scheduling.harness import LambdaWorkers

    return LambdaWorkers(setup.store, setup.scheduler, setup.executor, setup.clock)


def _drive(setup: Setup, max_passes: int = 10_000) -> tuple[int, int]:
    """Scheduler passes and workers (one at a time) until every run ends; (tries started, scheduler passes)."""
    workers = lambda_workers(setup)
    passes = 0
    with role("scheduler"):
        setup.scheduler.run_pass()
        passes += 1
    for _ in range(max_passes):
        with role("worker"):
            workers.drain()
        with role("bench"):  # the benchmark's own check, not the system's
            done = _finished(setup)
        if done:
            return sum(workers.started.values()), passes
        with role("scheduler"):
            setup.scheduler.run_pass()
            passes += 1
    raise AssertionError("the scenario did not finish")


def _work_dag(dag_id: str, **dag_kwargs):
    from airflow.sdk import DAG, task

    dag = DAG(dag_id, schedule=None, start_date=START, **dag_kwargs)

    @task(dag=dag)
    def work(x=None):
        return None

    return dag, work


def chain(n: int) -> Scenario:
    def build() -> Setup:
        dag, work = _work_dag("chain")
        with dag:
            previous = None
            for i in range(n):
                current = work.override(task_id=f"t{i:02d}")()
                if previous is not None:
                    previous >> current
                previous = current
        return _setup("chain", [dag], parallelism=128, pools={})

    return Scenario(f"chain of {n}", build)


def fan_out(width: int, runs: int = 1) -> Scenario:
    """One run of a 1 -> ``width`` -> 1 fan-out at parallelism ``width``, or ``runs`` runs of it at once (the
    environment's parallelism and default pool sized for all of them)."""
    def build() -> Setup:
        dag, work = _work_dag("fanout", max_active_tasks=width)
        with dag:
            middle = [work.override(task_id=f"m{i:04d}")() for i in range(width)]
            work.override(task_id="first")() >> middle >> work.override(task_id="last")()
        return _setup("fanout", [dag], parallelism=width * runs, pools={"default_pool": width * runs},
                      runs_per_dag=runs)

    if runs == 1:
        return Scenario(f"fan-out 1 -> {width} -> 1, parallelism {width}", build)
    return Scenario(f"{runs} runs of fan-out 1 -> {width} -> 1 at once, parallelism {width * runs}", build)


def pool_of_32(dags: int, tasks: int) -> Scenario:
    def build() -> Setup:
        built = []
        for d in range(dags):
            dag, work = _work_dag(f"pooled_{d:02d}", max_active_tasks=tasks)
            with dag:
                for i in range(tasks):
                    work.override(task_id=f"t{i:03d}", pool="shared")()
            built.append(dag)
        return _setup("pool32", built, parallelism=128, pools={"shared": 32})

    return Scenario(f"{dags} DAGs x {tasks} tasks, one pool of 32", build)


def mapped(instances: int, parallelism: int = 128) -> Scenario:
    """One mapped task of ``instances``; at parallelism 128 most wait for slots, at ``parallelism`` >= instances
    none does (the cost of the mapped instances' ends alone, apart from the waiting run's)."""
    def build() -> Setup:
        dag, work = _work_dag("mapped", max_active_tasks=instances)
        with dag:
            work.expand(x=list(range(instances)))
        pools = {} if parallelism <= 128 else {"default_pool": parallelism}  # 128: the default pool's size
        return _setup("mapped", [dag], parallelism=parallelism, pools=pools)

    return Scenario(f"{instances} mapped instances, parallelism {parallelism}", build)


def racing(schedulers: int, width: int) -> Scenario:
    """N scheduler threads and 4 worker threads at once on a fan-out: every conditional write that loses a race
    is charged too."""

    def build() -> Setup:
        dag, work = _work_dag("racing", max_active_tasks=width)
        with dag:
            for i in range(width):
                work.override(task_id=f"t{i:03d}")()
        return _setup("racing", [dag], parallelism=64, pools={})

    def drive(setup: Setup) -> tuple[int, int]:
        from updraft.scheduling import Scheduler, SchedulerConfig

        stop = threading.Event()
        passes = [0]
        started = [0]
        lock = threading.Lock()
        errors: list[BaseException] = []

        def scheduler_loop() -> None:
            scheduler = Scheduler(setup.store, setup.executor, SchedulerConfig(parallelism=64), clock=setup.clock)
            with role("scheduler"):
                while not stop.is_set():
                    try:
                        scheduler.run_pass()
                    except BaseException as exc:
                        errors.append(exc)
                        return
                    with lock:
                        passes[0] += 1

        def worker_loop() -> None:
            workers = lambda_workers(setup)
            with role("worker"):
                while not stop.is_set():
                    for item in setup.executor.take():
                        if workers.run_one(item):
                            with lock:
                                started[0] += 1
                    stop.wait(0.001)

        threads = [threading.Thread(target=scheduler_loop) for _ in range(schedulers)]
        threads += [threading.Thread(target=worker_loop) for _ in range(4)]
        for t in threads:
            t.start()
        try:
            while not (errors or stop.wait(0.05)):
                with role("bench"):
                    if _finished(setup):
                        break
        finally:
            stop.set()
            for t in threads:
                t.join()
        if errors:
            raise errors[0]
        return started[0], passes[0]

    return Scenario(f"{schedulers} schedulers racing, {width} tasks", build, drive)


@dataclasses.dataclass
class Scenario:
    name: str
    build: Callable[[], Setup]
    drive: Callable[[Setup], tuple[int, int]] = _drive


def run(scenario: Scenario, recorder: CapacityRecorder) -> Figures:
    setup = scenario.build()
    recorder.take()
    recorder.other_requests.clear()
    started = time.perf_counter()
    tasks, passes = scenario.drive(setup)
    charges = [c for c in recorder.take() if c.role != "bench"]
    result = figures(scenario.name, charges, tasks=tasks, scheduler_passes=passes,
                     other_requests=sum(recorder.other_requests.values()))
    print(f"{scenario.name}: {tasks} tasks, {result.requests_per_task * tasks:.0f} requests, "
          f"{time.perf_counter() - started:.0f} s on moto", file=sys.stderr)
    return result


@dataclasses.dataclass
class Sized:
    """A scenario at its full size, or at two smaller sizes whose per-task figures are extrapolated to it."""

    label: str
    make: Callable[[int], Scenario]
    full: int
    sizes: tuple[int, ...]  # run these; when the last is below ``full``, extrapolate from the last two
    linear: bool = True  # False: no item grows with the size (the largest size measured is the estimate)

    def figures(self, recorder: CapacityRecorder) -> list[Figures]:
        """The rows measured, plus the full size extrapolated when the last size is below it and there are two
        (one size below full, as ``--scale`` below 1 leaves a one-size scenario, is given as measured)."""
        measured = [run(self.make(n), recorder) for n in self.sizes]
        if self.sizes[-1] >= self.full or not self.linear or len(self.sizes) < 2:
            return measured
        (n_small, small), (n_large, large) = list(zip(self.sizes, measured, strict=True))[-2:]
        return [*measured, extrapolate(small, large, n_small, n_large, self.full, f"{self.label} (extrapolated)")]


def scenarios(scale: float) -> dict[str, Sized]:
    """Issue 19's five scenarios, the 1,000-wide fan-out again as 4 runs (a run's partition against the
    environment's) and the mapped run with parallelism as wide as the run. moto serves one request at a time (a few
    ms each, and a run-wide Query grows with the run), so the large ones run at two smaller sizes (``scale`` sets
    them) and are extrapolated."""

    def sizes(*ns: int) -> tuple[int, ...]:
        return tuple(max(2, round(n * scale)) for n in ns)

    return {
        "chain20": Sized("chain of 20", chain, 20, (20,)),
        # Measured at the full size: with sharded limits and the incremental mini scheduler a 1,000-wide run takes
        # ~6 minutes on moto, and one limit shard's load does not extrapolate from a run with fewer shards.
        "fanout": Sized("fan-out 1 -> 1000 -> 1, parallelism 1000", fan_out, 1000, sizes(100, 1000)),
        # The same 1,000 tasks as 4 runs: one run's instances share its partition's shards, the environment's do not.
        "fanout4": Sized("4 runs of fan-out 1 -> 250 -> 1 at once, parallelism 1000",
                         lambda n: fan_out(n, runs=4), 250, sizes(250)),
        # The pool item holds at most 32 holders whatever the size: not extrapolated (the rows show the trend).
        "pool32": Sized("50 DAGs x 100 tasks, one pool of 32", lambda n: pool_of_32(50, n), 100, sizes(2, 4),
                        linear=False),
        # Both sizes far above parallelism 128, so the limit items are as full as at 10,000 and nearly every
        # instance waits for a slot, as at 10,000 (at 150 and 300, 15% and 57% waited: a waiting end's bounded
        # cost then grew with the share and the straight line through them overstated 10,000 six-fold).
        "mapped": Sized("10000 mapped instances, parallelism 128", mapped, 10_000, sizes(1000, 2000)),
        # The same with parallelism (and default pool) as wide as the run: no instance waits for a slot.
        "mappedwide": Sized("10000 mapped instances, parallelism 10000", lambda n: mapped(n, parallelism=n),
                            10_000, sizes(150, 300)),
        # Racing costs what the races cost, not a function of size: run as it is (at 50 tasks by default).
        "racing": Sized("8 schedulers racing", lambda n: racing(8, n), 1, sizes(50)),
    }


def _row(f: Figures) -> str:
    _, key, units, kind = f.hottest
    return (f"| {f.name} | {f.tasks} | {f.requests_per_task:.1f} | {f.wcu_per_task:.1f} | {f.rcu_per_task:.1f} | "
            f"`{key}` | {units:.2f} {kind} | {f.hottest_share_at_reference:.0%} | {f.ceiling_starts_per_s:,.0f} | "
            f"{f.largest_item_bytes:,.0f} B | ${f.usd_per_1000_tasks_dynamodb:.4f} | "
            f"${f.usd_per_1000_tasks_lambda:.4f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=1.0, help="size of the large scenarios (1.0 = the issue's)")
    parser.add_argument("--only", default="chain20,fanout,fanout4,pool32,mapped,racing")
    parser.add_argument("--sites", action="store_true",
                        help="also print each scenario's requests per task by call site (who sends what)")
    args = parser.parse_args()

    from moto import mock_aws

    from updraft.local import moto_speedups

    moto_speedups.apply()
    chosen = scenarios(args.scale)
    results: list[Figures] = []
    with mock_aws(), CapacityRecorder().recording() as recorder:
        for name in args.only.split(","):
            results += chosen[name].figures(recorder)
    load = os.getloadavg()[0]
    print(f"\nCapacity model (issue 19): scale {args.scale}, load average {load:.2f}. Per task start; the hottest "
          f"key's share of its partition at {REFERENCE_STARTS_PER_S} task starts/s; ceiling = task starts/s at which "
          "the hottest key reaches 1,000 WCU/s or 3,000 RCU/s.\n")
    print("| scenario | tasks | requests/task | WCU/task | RCU/task | hottest key | its units/task | "
          f"share at {REFERENCE_STARTS_PER_S}/s | ceiling (starts/s) | largest item written | DynamoDB $/1k tasks | "
          "Lambda $/1k tasks |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for f in results:
        print(_row(f))
    print("\nRequests by operation:")
    for f in results:
        if f.by_operation:
            print(f"- {f.name}: " + ", ".join(f"{op} {n}" for op, n in sorted(f.by_operation.items())))
    if args.sites:
        for f in results:
            if f.by_site:
                print(f"\nRequests per task by call site, {f.name} (role: operation store method < caller):")
                for site, n in f.by_site.items():
                    print(f"  {n / f.tasks:6.2f}  {site}")
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "capacity.json").write_text(json.dumps([dataclasses.asdict(f) for f in results], indent=2))
    print(f"\nwritten: {out / 'capacity.json'}")


if __name__ == "__main__":
    main()
