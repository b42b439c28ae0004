"""UI benchmark: time to first paint of a DAG's grid (50 tasks x 25 runs) in headless Chromium.

usage: python bench/ui_bench.py [--repeat 7] [--tasks 50] [--runs 25]

Serves one environment as local mode does (embedded AWS in server mode, the API function behind local mode's
API Gateway) holding a DAG of ``--tasks`` tasks (five layers) with ``--runs`` finished runs, played through the
real scheduler by the test harness's workers (every 7th run fails one task, so the grid has several colours).
Then Debian's Chromium (Playwright) opens ``/dags/<dag>`` ``--repeat`` times in fresh contexts
(cold: assets fetched) and as many times in one context (warm: assets from the cache, as a returning user).
The figure is ``performance.now()`` at the first animation frame after the grid's table is in the page: from
navigation start to the grid drawn, with every API call it needs (the runs, one task-instance list per run).
The table also says how many API calls the page made and when the last one answered (the rest is drawing).
Prints a markdown table (p50, p90, min) and writes bench/results/ui.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "shared"), str(ROOT)]

from tests.browser.browser_helpers import CHROMIUM, FLAGS  # noqa: E402  (the browser tier's launch, exactly)

DAG_ID = "ui_bench"
START = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
PAINTED = "new Promise(done => requestAnimationFrame(() => done(performance.now())))"


def bench_dag(tasks: int):
    """Five layers of EmptyOperators (the scheduler finishes them itself, so seeding is quick) and one TaskFlow
    task, ``t03``, that a run can fail (its downstream tasks are then upstream_failed: the grid has colours)."""
    from airflow.providers.standard.operators.empty import EmptyOperator
    from airflow.sdk import DAG, task

    with DAG(DAG_ID, schedule=None, start_date=START) as dag:
        @task
        def flaky():
            return None

        width = max(1, tasks // 5)
        previous: list = []
        for layer in range(0, tasks, width):
            current = [flaky.override(task_id=f"t{i:02d}")() if i == 3 else EmptyOperator(task_id=f"t{i:02d}")
                       for i in range(layer, min(layer + width, tasks))]
            for before in previous:
                before >> current
            previous = current
    return dag


def seed(services, tasks: int, runs: int) -> float:
    from tests.functional.scheduling.harness import Workers, store_dags
    from updraft.executors.recording import RecordingExecutor
    from updraft.model.states import TaskInstanceState
    from updraft.scheduling.scheduler import Scheduler
    from updraft.scheduling.triggering import trigger_dag
    from updraft.scheduling.try_lifecycle import TryResult

    started = time.monotonic()
    store = services.store
    now = dt.datetime.now(dt.UTC)
    store_dags(store, bench_dag(tasks), now=now)
    executor = RecordingExecutor()
    clock = lambda: dt.datetime.now(dt.UTC)  # noqa: E731
    scheduler = Scheduler(store, executor, clock=clock)
    for n in range(runs):
        failing = "t03" if n % 7 == 6 else None

        def outcome(item, failing=failing) -> TryResult:
            failed = item.key.task_id == failing
            return TryResult(TaskInstanceState.FAILED if failed else TaskInstanceState.SUCCESS, force_fail=failed)

        when = now - dt.timedelta(minutes=runs - n)  # in the past: the scheduler starts it at once
        run = trigger_dag(store, DAG_ID, now=when, run_id=f"run_{n:02d}", logical_date=when)
        Workers(store, scheduler, executor, clock, outcome=outcome).run_to_end(DAG_ID, run.run_id, max_ticks=40)
    return time.monotonic() - started


# The grid's API calls as the browser timed them: how many, and when the last answer arrived.
API_TIMING = """(() => {
  const calls = performance.getEntriesByType("resource").filter(e => e.name.includes("/api/v2/"));
  return [calls.length, Math.max(...calls.map(e => e.responseEnd))];
})()"""


def measure(page, url: str) -> tuple[float, int, float]:
    """(first paint of the grid, API calls made, when the last one answered), in ms from navigation start."""
    page.goto(f"{url}/dags/{DAG_ID}")
    page.wait_for_selector("table.grid", timeout=120_000)
    painted = float(page.evaluate(PAINTED))
    calls, last = page.evaluate(API_TIMING)
    return painted, int(calls), float(last)


def request_times(url: str, repeat: int) -> float:
    """p50 of one API call made alone (the grid makes one such call per run)."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        with urllib.request.urlopen(url, timeout=60) as answer:
            answer.read()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def summary(loads: list[tuple[float, int, float]]) -> dict[str, float]:
    ordered = sorted(paint for paint, _, _ in loads)
    return {"p50": statistics.median(ordered), "p90": ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))],
            "min": ordered[0], "api_calls": statistics.median(calls for _, calls, _ in loads),
            "last_api_answer_p50": statistics.median(last for _, _, last in loads)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--tasks", type=int, default=50)
    parser.add_argument("--runs", type=int, default=25)
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    from updraft.local.system import LOCAL_CREDENTIALS

    os.environ.update(LOCAL_CREDENTIALS)  # the embedded AWS's fake credentials, as `updraft local` sets them

    from tests.functional.cli_system.cli_helpers import api_handler
    from updraft.local.api_gateway import LocalApiGateway
    from updraft.local.moto_server import EmbeddedAwsServer
    from updraft.local.provision import provision
    from updraft.resources import ResourceNames
    from updraft.services import Services

    with EmbeddedAwsServer() as aws:
        config = provision(ResourceNames("uibench"), aws.url).config()
        seeding = seed(Services(config), args.tasks, args.runs)
        gateway = LocalApiGateway(api_handler(Services(config)))
        token = "e30.eyJzdWIiOiAiYmVuY2giLCAicm9sZSI6ICJBRE1JTiJ9."  # {"sub": "bench", "role": "ADMIN"}
        init = f"localStorage.setItem('updraft.token', {json.dumps(token)})"
        cold: list[tuple[float, int, float]] = []
        warm: list[tuple[float, int, float]] = []
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
                for _ in range(args.repeat):
                    context = browser.new_context()
                    context.add_init_script(init)
                    cold.append(measure(context.new_page(), gateway.url))
                    context.close()
                context = browser.new_context()
                context.add_init_script(init)
                page = context.new_page()
                measure(page, gateway.url)  # fills the cache
                for _ in range(args.repeat):
                    warm.append(measure(page, gateway.url))
                cells = page.locator("table.grid tbody td").count()
                browser.close()
            one_list = request_times(f"{gateway.url}/api/v2/dags/{DAG_ID}/dagRuns/run_00/taskInstances", args.repeat)
        finally:
            gateway.close()

    rows = {"cold (fresh browser context)": summary(cold), "warm (assets cached)": summary(warm)}
    print(f"\nGrid of {args.tasks} tasks x {args.runs} runs ({cells} cells), {args.repeat} loads each; "
          f"seeding the runs took {seeding:.1f} s\n")
    print("| load | p50 first paint of the grid | p90 | min | API calls | p50 last API answer |")
    print("|---|---|---|---|---|---|")
    for name, f in rows.items():
        print(f"| {name} | {f['p50']:.0f} ms | {f['p90']:.0f} ms | {f['min']:.0f} ms | {f['api_calls']:.0f} "
              f"| {f['last_api_answer_p50']:.0f} ms |")
    print(f"\none run's task-instance list ({args.tasks} instances) asked alone: p50 {one_list:.0f} ms")
    print(f"machine load average (1 min) at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    results = ROOT / "bench" / "results"
    results.mkdir(exist_ok=True)
    (results / "ui.json").write_text(json.dumps({"tasks": args.tasks, "runs": args.runs, "cold_ms": cold,
                                                 "warm_ms": warm, "one_ti_list_ms": one_list, **rows}, indent=2))


if __name__ == "__main__":
    main()
