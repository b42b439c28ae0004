"""The REST API's latency through local mode's API Gateway (real HTTP), and the API Lambda's cold import.

usage: python bench/api_bench.py [--requests 100] [--dags 20]

Starts local mode in this process (embedded AWS, parser, scheduler, workers, API Gateway) on a temporary DAGs
folder of ``--dags`` small DAGs, waits until they are parsed, then times over HTTP:

- ``GET /api/v2/dags`` (the first page, with every DAG's response fields);
- ``POST /api/v2/dags/{dag_id}/dagRuns`` (a trigger with conf; each creates a run and nudges the scheduler);
- ``GET /api/v2/monitor/health``, the cheapest route, as the floor the gateway and the handler cost.

and, each in a fresh Python process (median of 5), ``import functions.api.handler`` (the Lambda's init phase,
target <= 300 ms) and the first request's extra cost (building the resolver and the routes). Prints a table of
p50/p95 in milliseconds. The machine's load changes the figures: compare runs made on the same machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT), str(ROOT / "shared"), str(HERE)]

from handler_imports import _env  # noqa: E402  (bench/ is not a package)

TARGET_IMPORT_MS = 300.0
DAG = """from airflow.sdk import DAG
from airflow.providers.standard.operators.empty import EmptyOperator

with DAG("bench_{i:03d}", schedule=None, tags=["bench"]):
    EmptyOperator(task_id="only")
"""
FIRST_REQUEST = """
import json, time
t0 = time.perf_counter()
import functions.api.handler as h
t1 = time.perf_counter()
h.app()
import updraft.api.routes
updraft.api.routes.all_routes()
t2 = time.perf_counter()
print(json.dumps({"import": (t1 - t0) * 1000, "first_request": (t2 - t1) * 1000}))
"""


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def timed(request: urllib.request.Request, expected: int) -> float:
    start = time.perf_counter()
    with urllib.request.urlopen(request, timeout=30) as response:
        response.read()
        if response.status != expected:
            raise SystemExit(f"{request.get_method()} {request.full_url}: {response.status}")
    return (time.perf_counter() - start) * 1000


def http_latencies(requests: int, dags: int) -> dict[str, list[float]]:
    from updraft.local.system import LocalOptions, LocalSystem

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "dags"
        folder.mkdir()
        for i in range(dags):
            (folder / f"bench_{i:03d}.py").write_text(DAG.format(i=i))
        os.environ["UPDRAFT_HOME"] = str(Path(tmp) / "home")
        system = LocalSystem(LocalOptions(dags_folder=str(folder), tick_seconds=5.0, workers=2,
                                          unpause_new_dags=True, write_endpoint=False), say=lambda _line: None)
        system.start()
        try:
            base = system.api.url
            deadline = time.time() + 120
            while time.time() < deadline:
                with urllib.request.urlopen(f"{base}/api/v2/dags?limit=1", timeout=30) as response:
                    if json.loads(response.read())["total_entries"] >= dags:
                        break
                time.sleep(0.5)
            out: dict[str, list[float]] = {"GET /api/v2/monitor/health": [], "GET /api/v2/dags": [],
                                           "POST /api/v2/dags/{dag_id}/dagRuns": []}
            for i in range(requests):
                out["GET /api/v2/monitor/health"].append(
                    timed(urllib.request.Request(f"{base}/api/v2/monitor/health"), 200))
                out["GET /api/v2/dags"].append(timed(urllib.request.Request(f"{base}/api/v2/dags"), 200))
                body = json.dumps({"dag_run_id": f"bench_{i}", "logical_date": None, "conf": {"i": i}}).encode()
                trigger = urllib.request.Request(f"{base}/api/v2/dags/bench_{i % dags:03d}/dagRuns", data=body,
                                                 method="POST", headers={"Content-Type": "application/json"})
                out["POST /api/v2/dags/{dag_id}/dagRuns"].append(timed(trigger, 200))
            return out
        finally:
            system.stop()


def cold_start(repeat: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"import functions.api.handler": [], "first request (resolver + routes)": []}
    for _ in range(repeat):
        result = subprocess.run([sys.executable, "-c", FIRST_REQUEST], cwd=ROOT, env=_env(), capture_output=True,
                                text=True, check=True).stdout
        figures = json.loads(result.strip().splitlines()[-1])
        out["import functions.api.handler"].append(figures["import"])
        out["first request (resolver + routes)"].append(figures["first_request"])
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--dags", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rows = {**http_latencies(args.requests, args.dags), **cold_start(args.repeat)}
    print(f"{'measure':45} {'n':>5} {'p50 ms':>9} {'p95 ms':>9}")
    for name, values in rows.items():
        print(f"{name:45} {len(values):>5} {statistics.median(values):>9.1f} {percentile(values, 0.95):>9.1f}")
    import_ms = statistics.median(rows["import functions.api.handler"])
    verdict = "ok" if import_ms <= TARGET_IMPORT_MS else "OVER TARGET"
    print(f"API Lambda cold import: {import_ms:.0f} ms (target <= {TARGET_IMPORT_MS:.0f} ms): {verdict}")
    return 0 if import_ms <= TARGET_IMPORT_MS else 1


if __name__ == "__main__":
    sys.exit(main())
