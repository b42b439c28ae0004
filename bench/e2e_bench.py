"""End-to-end benchmark: the Airflow benchmark DAGs run by the local system (``updraft local``), beside Airflow.

usage: python bench/e2e_bench.py [--repeat 3] [--workers 32] [--dags bench_chain20,bench_fanout200,bench_pools]

Each repetition starts a fresh local system (embedded AWS in server mode, parser, scheduler, a pool of worker
processes) on a folder holding the benchmark DAGs of ``shared/notes/airflow-bench``, waits for the parser to
store them, creates the pool ``bench_p2`` (2 slots), waits for the system to settle (``settle``: its worker
processes' task servers warm up after it starts), then for each DAG: unpause, trigger (a manual run and the
scheduler nudge, as ``updraft dags trigger`` does), and wait for the run to finish. Figures come from the
store, as Airflow's came from its metadata DB: queued_at -> the run's end, hops (end of task N -> start of
task N+1), the pool's peak slots in use from the task intervals, and the start order against priority.
Prints a markdown table with the medians of the repetitions and the machine's load, and the CPU every process of
the system spent per task while the DAG ran (``tree_cpu_s``: steadier than the time on a shared machine, and what
local mode's speed comes down to on 2 cores), then each DAG's requests to the embedded AWS per task and the CPU
its server spent on them (``request_census``, the last repetition), and writes bench/results/e2e.json; with
``--record PATH``, also the last repetition's DynamoDB requests, for ``request_replay``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from bench.request_census import RequestCensus, Tally  # noqa: E402
from bench.request_census import render as render_census  # noqa: E402
from bench.request_replay import Recorder  # noqa: E402

# The notes sit beside the checkout (``../shared``); a worktree is one level deeper, so the nearest ancestor wins.
_NOTES = Path("shared") / "notes" / "airflow-bench"
BENCH_DAGS = next((p / _NOTES for p in ROOT.parents if (p / _NOTES).is_dir()), ROOT.parent / _NOTES)
DAGS = ("bench_chain20", "bench_fanout200", "bench_pools")
POOL, POOL_SLOTS = "bench_p2", 2

AIRFLOW = {  # shared/notes/airflow-baseline.md, LocalExecutor, queued_at -> end
    "bench_chain20": "22.2 s, median hop 0.96 s",
    "bench_fanout200": "28.6 s (32 concurrent, Postgres)",
    "bench_pools": "11.7-13.6 s, limit held",
}
TARGET = {
    "bench_chain20": "<= 1.5 s, median hop <= 50 ms",
    "bench_fanout200": "<= 10 s on a quiet machine",
    "bench_pools": "<= 6.5 s, limit held, order by priority",
}


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def tree_cpu_s(root: int | None = None) -> float:
    """CPU seconds (user and system) of process ``root`` (this one) and of every process below it, living or
    already waited for (a waited-for child's CPU is in its parent's ``cutime``/``cstime``), from ``/proc``."""
    from updraft import reaper

    root = os.getpid() if root is None else root
    tick = os.sysconf("SC_CLK_TCK")
    spent = 0.0
    for pid in (root, *reaper.descendants(root)):
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:  # it ended meanwhile
            continue
        spent += sum(int(value) for value in fields[11:15]) / tick
    return spent


def settle(*, idle: float = 0.25, quiet_s: int = 2, limit_s: float = 60.0, cpu: Callable[[], float] = tree_cpu_s,
           sleep: Callable[[float], None] = time.sleep) -> float:
    """Wait until the system's processes use under ``idle`` of a core for ``quiet_s`` seconds running, at most
    ``limit_s`` seconds; returns how long it waited. The worker processes' task servers warm up after the system
    starts (imports, a collection): a DAG triggered at once shared the cores with that, and the first DAG's CPU
    and time counted it (the chain: 2.9 s at ~230 CPU-ms a task, against 1.3-1.5 s at ~80 once settled). Airflow's
    baseline ran on a running system, so the DAGs run on a settled one."""
    waited, quiet, before = 0.0, 0, cpu()
    while quiet < quiet_s and waited < limit_s:
        sleep(1.0)
        waited += 1.0
        now = cpu()
        quiet = quiet + 1 if now - before < idle else 0
        before = now
    return waited


# The figures come from the store, not from when a poll saw the end; a poll is a request served by the measured
# process (~2.5 ms of its CPU with the client's): twice a second, not ten times (~1 ms of a fan-out's CPU a task).
POLL_S = 0.5


def _wait(predicate: Any, timeout: float, what: str) -> Any:
    """``predicate``'s first true value, polled every ``POLL_S``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(POLL_S)
    raise TimeoutError(f"{what} did not happen within {timeout} s")


def peak_slots(tis: list[Any]) -> int:
    """The most pool slots in use at any instant, from the tries' start and end times."""
    events = []
    for ti in tis:
        if ti.start_date and ti.end_date:
            events += [(ti.start_date, 1, ti.pool_slots), (ti.end_date, 0, -ti.pool_slots)]
    in_use = peak = 0
    for _, _, delta in sorted(events):  # ends sort before starts at the same instant
        in_use += delta
        peak = max(peak, in_use)
    return peak


def priority_inversions(tis: list[Any], slots: int) -> list[str]:
    """Claims that overtook a higher-priority task which would have fitted in the slots free at that moment.

    Judged at claim time (``queued_at``: a slot is held from the claim to the end), not at start time: a
    2-slot task waiting while only one slot is free may be overtaken by a 1-slot task, as in Airflow.
    """
    claimed = sorted((ti for ti in tis if ti.queued_at), key=lambda ti: ti.queued_at)
    found = []
    for ti in claimed:
        at = ti.queued_at
        held = sum(o.pool_slots for o in claimed if o is not ti and o.queued_at <= at < (o.end_date or at))
        free = slots - held
        for other in claimed:
            if other.queued_at > at and other.priority_weight > ti.priority_weight and other.pool_slots <= free:
                found.append(f"{ti.key.task_id} before {other.key.task_id}")
    return found


def measure(store: Any, dag_id: str, run: Any) -> dict[str, Any]:
    tis = store.get_run_tis(dag_id, run.run_id)
    total = (run.end_date - run.queued_at).total_seconds()
    out: dict[str, Any] = {"state": run.state.value, "total_s": round(total, 3), "tasks": len(tis)}
    first_start = min(ti.start_date for ti in tis if ti.start_date)
    out["queued_to_first_start_s"] = round((first_start - run.queued_at).total_seconds(), 3)
    if dag_id == "bench_chain20":
        ordered = sorted(tis, key=lambda ti: ti.key.task_id)
        hops = [(b.start_date - a.end_date).total_seconds() for a, b in itertools.pairwise(ordered)]
        out["median_hop_ms"] = round(statistics.median(hops) * 1000, 1)
        out["max_hop_ms"] = round(max(hops) * 1000, 1)
    if dag_id == "bench_fanout200":
        mids = [ti for ti in tis if ti.key.task_id.startswith("m")]
        out["peak_concurrency"] = peak_slots([_one_slot(ti) for ti in mids])
    if dag_id == "bench_pools":
        out["peak_slots"] = peak_slots(tis)
        # Claims of one pass share a queued_at and go in priority order.
        out["start_order"] = [ti.key.task_id for ti in sorted(tis, key=lambda ti: (ti.queued_at, -ti.priority_weight))]
        out["priority_inversions"] = priority_inversions(tis, POOL_SLOTS)
    return out


def _one_slot(ti: Any) -> Any:
    from dataclasses import replace

    return replace(ti, pool_slots=1)


def one_repetition(workers: int, dags: list[str], tick: float, concurrent_aws: bool = False,
                   run_timeout: float = 300, recorder: Recorder | None = None) -> dict[str, Any]:
    from updraft.local.system import LocalOptions, LocalSystem
    from updraft.scheduling.commands import set_paused, trigger_dag

    # Airflow's baseline ran fan-out with max_active_tasks_per_dag=32; the same configuration variable here.
    os.environ["AIRFLOW__CORE__MAX_ACTIVE_TASKS_PER_DAG"] = str(max(workers, 16))
    folder = Path(tempfile.mkdtemp(prefix="updraft-e2e-"))
    for dag_id in dags:
        shutil.copy(BENCH_DAGS / f"{dag_id}.py", folder / f"{dag_id}.py")
    system = LocalSystem(LocalOptions(dags_folder=str(folder), workers=workers, tick_seconds=tick,
                                      write_endpoint=False, concurrent_aws=concurrent_aws), say=lambda line: None)
    started = time.monotonic()
    system.start()
    census = RequestCensus()
    system.server.wrap(census.wrap)
    if recorder is not None:
        system.server.wrap(recorder.wrap)
    results: dict[str, Any] = {"startup_s": round(time.monotonic() - started, 2)}
    try:
        store = system.services.store
        _wait(lambda: all(store.get_dag_meta(d) for d in dags), 60, "parsing the benchmark DAGs")
        store.set_pool(POOL, POOL_SLOTS, "bench_pools")
        results["settled_s"] = settle()
        for dag_id in dags:
            set_paused(store, dag_id, False)
            time.sleep(0.2)  # let the unpause settle so no tick races the trigger
            system.pool.take_peak_busy()
            census.take()
            cpu = tree_cpu_s()
            run = trigger_dag(store, dag_id, now=_now())
            system.services.nudge_scheduler(dag_id, run.run_id)
            finished = _wait(lambda r=run, d=dag_id: _finished(store, d, r.run_id), run_timeout,
                             f"{dag_id} finishing")
            cpu = tree_cpu_s() - cpu
            results[dag_id] = measure(store, dag_id, finished)
            results[dag_id]["cpu_ms_per_task"] = round(cpu * 1000 / results[dag_id]["tasks"], 1)
            results[dag_id]["peak_busy_workers"] = system.pool.take_peak_busy()
            results[dag_id]["requests"] = {name: {"count": t.count, "cpu_s": round(t.cpu_s, 4)}
                                           for name, t in census.take().items()}
    finally:
        system.stop()
        shutil.rmtree(folder, ignore_errors=True)
    return results


def _finished(store: Any, dag_id: str, run_id: str) -> Any:
    run = store.get_run(dag_id, run_id)
    return run if run is not None and run.state.value in ("success", "failed") else None


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 3)


def summarize(reps: list[dict[str, Any]], dags: list[str]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for dag_id in dags:
        runs = [rep[dag_id] for rep in reps]
        row: dict[str, Any] = {"total_s": _median([r["total_s"] for r in runs]),
                               "cpu_ms_per_task": _median([r["cpu_ms_per_task"] for r in runs]),
                               "states": [r["state"] for r in runs]}
        if dag_id == "bench_chain20":
            row["median_hop_ms"] = _median([r["median_hop_ms"] for r in runs])
        if dag_id == "bench_fanout200":
            row["peak_concurrency"] = max(r["peak_concurrency"] for r in runs)
            row["peak_busy_workers"] = max(r["peak_busy_workers"] for r in runs)
        if dag_id == "bench_pools":
            row["peak_slots"] = max(r["peak_slots"] for r in runs)
            row["priority_inversions"] = sum(len(r["priority_inversions"]) for r in runs)
            row["claim_orders"] = [" ".join(t.split("_")[0] for t in r["start_order"]) for r in runs]
        out[dag_id] = row
    return out


def render(summary: dict[str, dict[str, Any]], meta: dict[str, Any]) -> str:
    lines = [f"Updraft local mode, {meta['workers']} worker processes, median of {meta['repeat']} runs; "
             f"load average {meta['load_before']} before, {meta['load_after']} after; {meta['cpus']} CPUs", "",
             "| DAG | Airflow 3.3.2 (LocalExecutor) | Updraft target | Updraft local (median) |",
             "|---|---|---|---|"]
    for dag_id, row in summary.items():
        figure = f"{row['total_s']:.2f} s ({row['cpu_ms_per_task']:.0f} CPU-ms a task)"
        if "median_hop_ms" in row:
            figure += f", median hop {row['median_hop_ms']:.0f} ms"
        if "peak_concurrency" in row:
            figure += (f", {row['peak_concurrency']} concurrent at peak, "
                       f"{row['peak_busy_workers']}/{meta['workers']} workers busy at peak")
        if "peak_slots" in row:
            figure += (f", peak slots {row['peak_slots']}/{POOL_SLOTS}, "
                       f"{row['priority_inversions']} priority inversions")
        if any(state != "success" for state in row["states"]):
            figure += f" (states: {', '.join(row['states'])})"
        lines.append(f"| {dag_id} | {AIRFLOW[dag_id]} | {TARGET[dag_id]} | {figure} |")
    for dag_id, row in summary.items():
        for order in row.get("claim_orders", []):
            lines.append(f"\n{dag_id} claim order: {order}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workers", type=int, default=32)
    parser.add_argument("--tick", type=float, default=5.0)
    parser.add_argument("--run-timeout", type=float, default=300,
                        help="seconds a run may take before the repetition fails (a loaded machine needs more)")
    parser.add_argument("--dags", default=",".join(DAGS))
    parser.add_argument("--concurrent-aws", action="store_true",
                        help="the embedded DynamoDB serves different items at once (per-item atomic)")
    parser.add_argument("--record", type=Path, metavar="PATH",
                        help="write the last repetition's DynamoDB requests to PATH (bench/request_replay.py)")
    args = parser.parse_args()
    dags = [d for d in args.dags.split(",") if d]
    load_before = round(os.getloadavg()[0], 2)
    reps = []
    recorder = Recorder() if args.record else None
    for index in range(args.repeat):
        last = index == args.repeat - 1
        reps.append(one_repetition(args.workers, dags, args.tick, args.concurrent_aws, args.run_timeout,
                                   recorder if last else None))
        print(f"run {index + 1}/{args.repeat}: " + json.dumps({d: reps[-1][d]["total_s"] for d in dags}), flush=True)
    meta = {"workers": args.workers, "repeat": args.repeat, "concurrent_aws": args.concurrent_aws,
            "load_before": load_before,
            "load_after": round(os.getloadavg()[0], 2), "cpus": os.cpu_count(), "tick_s": args.tick}
    summary = summarize(reps, dags)
    print(render(summary, meta))
    for dag_id in dags:
        last = reps[-1][dag_id]
        tallies = {name: Tally(t["count"], t["cpu_s"]) for name, t in last["requests"].items()}
        print(f"\n{dag_id}: requests to the embedded AWS ({last['tasks']} tasks, the last repetition)\n")
        print(render_census(tallies, last["tasks"]))
    out = ROOT / "bench" / "results" / "e2e.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"meta": meta, "summary": summary, "runs": reps}, indent=2, default=str))
    print(f"\nraw results: {out.relative_to(ROOT)}")
    if recorder is not None:
        recorder.write(args.record)
        print(f"requests of the last repetition: {args.record} (python bench/request_replay.py {args.record})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
