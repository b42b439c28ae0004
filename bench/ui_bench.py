"""UI benchmark: time to a drawn grid, and API requests per page, for a 16-task DAG with 25, 1,000 and 10,000 runs.

usage: python bench/ui_bench.py [--repeat 5] [--tasks 16] [--runs 25,1000,10000] [--page 25]

Serves environments as local mode does (embedded AWS in server mode, the API function behind local mode's API
Gateway), one per run count (its own table: on moto every query reads the whole table). For each, a DAG of
``--tasks`` tasks (five layers of EmptyOperators) gets that many finished runs, written straight into the store
(25 a request, eight writers at a time: playing 10,000 runs through the scheduler would take an hour), one a
minute back from now, every 7th failed. Every run of the newest
``4 x --page`` has its ``--tasks`` task instances (success, or failed and upstream_failed in a failed run);
older runs have their run item only: neither grid route nor page reads an instance of a run off the page.

Then Debian's Chromium (Playwright) opens ``/dags/<dag>`` ``--repeat`` times in fresh contexts (cold: assets
fetched) and as many times in one context (warm: assets cached, as a returning user), served as local mode
serves it without users (the session opens itself, as in Airflow's all-admins mode). The figure is
``performance.now()`` at the first animation frame after the grid's table is in the page, timed in the page: from
navigation start to the grid drawn, with every API call it needs. The table says how many API calls the page made
and how many one click on "Older" (the next page of runs) made.
Prints a markdown table (p50, p90, min per run count) and writes bench/results/ui.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "shared"), str(ROOT)]

from tests.browser.browser_helpers import CHROMIUM, FLAGS  # noqa: E402  (the browser tier's launch, exactly)

START = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
# Set in the page before its own scripts run: the first animation frame after the grid's table enters the document,
# timed in the page (read after Playwright sees the table, its own round trips are not counted).
GRID_DRAWN = """new MutationObserver((changes, observer) => {
  if (!document.querySelector("table.grid")) return;
  observer.disconnect();
  requestAnimationFrame(() => { window.__gridDrawn = performance.now(); });
}).observe(document, { childList: true, subtree: true });"""
WRITERS = 8


def bench_dag(dag_id: str, tasks: int) -> Any:
    """Five layers of EmptyOperators, each task downstream of every task of the layer before."""
    from airflow.providers.standard.operators.empty import EmptyOperator
    from airflow.sdk import DAG

    with DAG(dag_id, schedule=None, start_date=START) as dag:
        width = max(1, tasks // 5)
        previous: list[Any] = []
        for layer in range(0, tasks, width):
            current = [EmptyOperator(task_id=f"t{i:02d}") for i in range(layer, min(layer + width, tasks))]
            for before in previous:
                before >> current
            previous = current
    return dag


def _batch_write_runs(store: Any, runs: list[Any]) -> None:
    """Finished runs as ``RunStore.create_run`` writes them (no active-index keys: none is unfinished), 25 a
    request (DynamoDB's BatchWriteItem): seeding 10,000 runs one PutItem each takes minutes on moto."""
    from updraft.store import keys
    from updraft.store.writes import write_token

    R = store.models.run
    with R.batch_write() as batch:
        for run in runs:
            batch.save(R(keys.dag_pk(run.dag_id), keys.run_sk(run.run_id), dag_id=run.dag_id, run_id=run.run_id,
                         run_type=str(run.run_type), dag_hash=run.dag_hash, state=str(run.state),
                         logical_date=run.logical_date, run_after=run.run_after, queued_at=run.queued_at,
                         start_date=run.start_date, end_date=run.end_date,
                         run_date_sk=keys.run_date_sk(run.logical_date, run.run_id), write_token=write_token()))


def seed(store: Any, dag_id: str, tasks: int, runs: int, with_instances: int) -> float:
    """``runs`` finished runs of the DAG straight into the store; the newest ``with_instances`` with instances."""
    from tests.functional.scheduling.harness import store_dags
    from updraft.model.records import DagRun, TIKey
    from updraft.model.states import DagRunState, TaskInstanceState

    started = time.monotonic()
    now = dt.datetime.now(dt.UTC)
    dag = bench_dag(dag_id, tasks)
    store_dags(store, dag, now=now, unpause=False)  # paused, every run finished: the page does not poll
    dag_hash = store.get_dag_meta(dag_id).dag_hash
    task_ids = [t.task_id for t in dag.tasks]

    def run(n: int) -> Any:
        when = now - dt.timedelta(minutes=runs - n)
        return DagRun(dag_id=dag_id, run_id=f"run_{n:05d}", run_type="manual", dag_hash=dag_hash,
                      state=DagRunState.FAILED if n % 7 == 6 else DagRunState.SUCCESS, logical_date=when,
                      run_after=when, queued_at=when, start_date=when,
                      end_date=when + dt.timedelta(seconds=20 + n % 13 * 5))

    def instances(n: int) -> None:
        made = run(n)
        failed = made.state == DagRunState.FAILED
        for i, task_id in enumerate(task_ids):
            state = (TaskInstanceState.FAILED if failed and i == 3 else TaskInstanceState.UPSTREAM_FAILED
                     if failed and i > 3 else TaskInstanceState.SUCCESS)
            start = made.start_date + dt.timedelta(seconds=i)
            store.create_ti(TIKey(dag_id, made.run_id, task_id), state=state,
                            fields={"try_number": 1, "start_date": start, "end_date": start + dt.timedelta(seconds=1)})

    everyone = [run(n) for n in range(runs)]
    with ThreadPoolExecutor(max_workers=WRITERS) as pool:
        list(pool.map(lambda at: _batch_write_runs(store, everyone[at:at + 500]), range(0, runs, 500)))
        list(pool.map(instances, range(max(0, runs - with_instances), runs)))
    return time.monotonic() - started


# The page's API calls as the browser timed them: how many, and when the last answer arrived.
API_TIMING = """(() => {
  const calls = performance.getEntriesByType("resource").filter(e => e.name.includes("/api/v2/"));
  return [calls.length, Math.max(0, ...calls.map(e => e.responseEnd))];
})()"""
API_CALLS = """performance.getEntriesByType("resource").filter(e => e.name.includes("/api/v2/")).length"""


def measure(page: Any, url: str, dag_id: str) -> tuple[float, int, float]:
    """(the grid drawn, API calls made, when the last one answered), in ms from navigation start."""
    page.goto(f"{url}/dags/{dag_id}")
    page.wait_for_selector("table.grid", timeout=120_000)
    page.wait_for_function("() => window.__gridDrawn !== undefined")
    painted = float(page.evaluate("window.__gridDrawn"))
    calls, last = page.evaluate(API_TIMING)
    return painted, int(calls), float(last)


def next_page_calls(page: Any) -> int | None:
    """API calls made by one click on "Older" (None where the page has no such button)."""
    older = page.get_by_role("button", name="Older")
    if older.count() == 0 or older.is_disabled():
        return None
    before = page.evaluate(API_CALLS)
    first = page.locator("table.grid thead a").first.get_attribute("href")
    older.click()
    page.wait_for_function("(first) => { const a = document.querySelector('table.grid thead a');"
                           " return a && a.getAttribute('href') !== first; }", arg=first, timeout=120_000)
    page.wait_for_load_state("networkidle")
    return int(page.evaluate(API_CALLS)) - int(before)


def summary(loads: list[tuple[float, int, float]]) -> dict[str, float]:
    ordered = sorted(paint for paint, _, _ in loads)
    return {"p50": statistics.median(ordered), "p90": ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))],
            "min": ordered[0], "api_calls": statistics.median(calls for _, calls, _ in loads),
            "last_api_answer_p50": statistics.median(last for _, _, last in loads)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--tasks", type=int, default=16)
    parser.add_argument("--runs", default="25,1000,10000", help="run counts, comma-separated")
    parser.add_argument("--page", type=int, default=25, help="the grid's runs per page (its default)")
    args = parser.parse_args()
    counts = [int(n) for n in args.runs.split(",")]

    from playwright.sync_api import sync_playwright

    from updraft.local.system import LOCAL_CREDENTIALS

    os.environ.update(LOCAL_CREDENTIALS)  # the embedded AWS's fake credentials, as `updraft local` sets them

    from tests.functional.cli_system.cli_helpers import api_handler
    from updraft.local.api_gateway import LocalApiGateway
    from updraft.local.moto_server import EmbeddedAwsServer
    from updraft.local.provision import provision
    from updraft.resources import ResourceNames
    from updraft.services import Services

    results: dict[str, Any] = {"tasks": args.tasks, "page": args.page, "scenarios": {}}
    with EmbeddedAwsServer() as aws, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        for runs in counts:
            # An environment (table) per run count: the 25-run figure is not read off a table holding 11,000.
            config = provision(ResourceNames(f"uibench{runs}"), aws.url).config()
            dag_id = f"grid_{runs}"
            seeding = seed(Services(config).store, dag_id, args.tasks, runs, with_instances=4 * args.page)
            # Served as `updraft local` serves it without users: every caller is admin (the session opens itself).
            gateway = LocalApiGateway(api_handler(Services(dataclasses.replace(config, local_compute="unused"))))
            try:
                cold = []
                for _ in range(args.repeat):
                    fresh = browser.new_context()
                    fresh.add_init_script(GRID_DRAWN)
                    cold.append(measure(fresh.new_page(), gateway.url, dag_id))
                    fresh.close()
                kept = browser.new_context()
                kept.add_init_script(GRID_DRAWN)
                page = kept.new_page()
                measure(page, gateway.url, dag_id)  # fills the cache
                warm = [measure(page, gateway.url, dag_id) for _ in range(args.repeat)]
                cells = page.locator("table.grid tbody td").count()
                older = next_page_calls(page)
                kept.close()
            finally:
                gateway.close()
            results["scenarios"][str(runs)] = {
                "seeding_s": seeding, "cells": cells, "next_page_api_calls": older,
                "cold": summary(cold), "warm": summary(warm), "cold_ms": cold, "warm_ms": warm}
        browser.close()

    print(f"\nGrid of a {args.tasks}-task DAG, {args.page} runs a page, {args.repeat} loads each "
          f"(cold: fresh browser context; warm: assets cached)\n")
    print("| runs | load | p50 grid drawn | p90 | min | API calls (page) | p50 last API answer | API calls (Older) |")
    print("|---|---|---|---|---|---|---|---|")
    for runs, found in results["scenarios"].items():
        for load in ("cold", "warm"):
            f = found[load]
            older = found["next_page_api_calls"]
            print(f"| {int(runs):,} | {load} | {f['p50']:.0f} ms | {f['p90']:.0f} ms | {f['min']:.0f} ms "
                  f"| {f['api_calls']:.0f} | {f['last_api_answer_p50']:.0f} ms | {'—' if older is None else older} |")
    print("\nseeding: " + ", ".join(f"{int(r):,} runs {s['seeding_s']:.0f} s" for r, s in results["scenarios"].items()))
    print(f"machine load average (1 min) at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "ui.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
