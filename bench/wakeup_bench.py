"""Start delay after due: how late a minutely DAG's scheduled runs start, with the tick at AWS's 60 s (issue 36).

usage: python bench/wakeup_bench.py [--runs 30] [--only embedded,local] [--local-minutes 3] [--label NAME]

Measures whatever tree is on the path: run it once with the tree before wake-ups (``git worktree add``) and once
with this one, and compare the tables.

- **embedded**: the embedded AWS with AWS's latency per request (moto guarded by ``updraft.local.concurrent_moto``,
  ``updraft.local.latency.AWS``), the deferral state machine's ASL on the local engine, the Lambda executor and
  worker Lambdas as threads (``latency_bench``'s world). Waiting is skipped, working is not: the clock is the wall
  clock plus the waits skipped, and it jumps only while nothing runs, to the next event: the tick (EventBridge's
  ``rate(1 minute)`` fires at a fixed second within the minute that differs per rule: drawn uniformly, seeded, per
  minute, so the figures are those of any environment) or a wake-up's end (its Wait's moment, plus an assumed Step
  Functions Wait-to-invoke lag of p50 100 ms / p99 500 ms, plus Lambda's event -> warm handler latency). Then what
  that event starts runs in real time. ``--runs`` due moments.
- **local**: ``updraft local`` itself (embedded AWS, worker processes, the local Step Functions engine) with its
  tick at 60 s, for ``--local-minutes`` of wall time on a minutely DAG unpaused at the start.

Delay = the run's start (queued -> running) and its first task's start, minus the run's ``run_after``. Prints a
markdown table (p50, p99, max) and writes bench/results/wakeups-<label>.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
for _name, _value in {"AWS_DEFAULT_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "bench",
                      "AWS_SECRET_ACCESS_KEY": "bench"}.items():
    os.environ.setdefault(_name, _value)

TICK = dt.timedelta(seconds=60)
FUNCTION = "updraft-bench-worker"
DAG_ID = "minutely"
DAG_FILE = f'''
import datetime
from airflow.sdk import DAG
from airflow.providers.standard.operators.python import PythonOperator

with DAG("{DAG_ID}", schedule="* * * * *", start_date=datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc),
         catchup=False):
    PythonOperator(task_id="work", python_callable=lambda: 1)
'''


def _real_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class SkippingClock:
    """The wall clock plus the waits skipped; ``jump_to`` skips to a later moment (never back)."""

    def __init__(self, start: dt.datetime) -> None:
        self._offset = start - _real_now()
        self._lock = threading.Lock()

    def __call__(self) -> dt.datetime:
        with self._lock:
            return _real_now() + self._offset

    def jump_to(self, moment: dt.datetime) -> None:
        with self._lock:
            self._offset += max(dt.timedelta(0), moment - (_real_now() + self._offset))


class InFlight:
    """Counts what runs on other threads (Lambda invokes, wake-ups), so the clock jumps only when all is idle."""

    def __init__(self) -> None:
        self.count = 0
        self.errors: list[BaseException] = []
        self._lock = threading.Lock()

    def later(self, delay: float, work: Any) -> None:
        with self._lock:
            self.count += 1

        def run() -> None:
            try:
                work()
            except BaseException as exc:
                self.errors.append(exc)
            finally:
                with self._lock:
                    self.count -= 1

        threading.Timer(delay, run).start()

    def wait_idle(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while self.count and time.monotonic() < deadline:
            time.sleep(0.005)
        if self.errors:
            raise self.errors[0]
        if self.count:
            raise TimeoutError("work still in flight")


class BenchLambda:
    """The worker function's async invoke: the Invoke call's latency, then the handler on a thread after the
    event -> warm start delay, playing the worker as ``tests.functional.scheduling.harness.Workers`` does."""

    def __init__(self, latency: Any, inflight: InFlight, handle: Any) -> None:
        self.latency, self.inflight, self.handle = latency, inflight, handle

    def invoke(self, *, FunctionName: str, InvocationType: str, Payload: bytes, **_: Any) -> dict[str, Any]:
        time.sleep(self.latency.invoke_api())
        payload = json.loads(Payload)
        self.inflight.later(self.latency.event_to_start(), lambda: self.handle(payload))
        return {"StatusCode": 202}


def embedded(runs: int, seed: int) -> list[dict[str, float]]:
    from moto import mock_aws

    from tests.functional.scheduling.harness import Workers, make_store
    from updraft.executors.base import Dispatch
    from updraft.executors.lambda_ import LambdaExecutor
    from updraft.executors.step_functions import StepFunctionsWaits
    from updraft.handler_events import worker_dispatch
    from updraft.local import moto_speedups
    from updraft.local.concurrent_moto import ConcurrentMoto
    from updraft.local.latency import AWS, LatencySource, Lognormal
    from updraft.local.step_functions import LocalStepFunctions
    from updraft.model.parse_results import ParsedFile
    from updraft.runtime.loader import LocalDagLoader
    from updraft.runtime.worker import handle_dispatch
    from updraft.scheduling import Scheduler, SchedulerConfig
    from updraft.scheduling.commands import register_parsed_file, set_paused
    from updraft.serialization import serialize_dag
    from updraft.triggers.state_machine import definition

    moto_speedups.apply()
    latency = LatencySource(AWS, seed=seed)
    sfn_lag = Lognormal(100.0, 500.0)  # an assumption (AWS publishes none): a Wait's end -> its Task's invoke
    rng = random.Random(seed)
    folder = Path(tempfile.mkdtemp(prefix="updraft-wakeups-"))
    (folder / f"{DAG_ID}.py").write_text(DAG_FILE)
    start = dt.datetime(2026, 12, 2, 12, 0, 0, 500000, tzinfo=dt.UTC)  # just after a due moment
    clock = SkippingClock(start)
    inflight = InFlight()
    try:
        with mock_aws(), ConcurrentMoto(latency).in_process():
            store = make_store(f"bench-wakeups-{time.monotonic_ns()}")
            holder: dict[str, Any] = {}

            def run_try(payload: dict[str, Any]) -> None:
                Workers(store, holder["scheduler"], holder["executor"], clock).run_one(Dispatch.from_payload(payload))

            executor = LambdaExecutor(BenchLambda(latency, inflight, run_try), FUNCTION)  # type: ignore[arg-type]
            scheduler = Scheduler(store, executor, SchedulerConfig(), clock=clock)
            holder.update(scheduler=scheduler, executor=executor)

            def wake(function: str, payload: Any) -> None:  # the state machine's Task: the worker gets the wake
                delay = sfn_lag.draw(latency._rng) + latency.event_to_start()
                inflight.later(delay, lambda: handle_dispatch(worker_dispatch(payload), store=store, loader=None,
                                                              scheduler=scheduler, now_fn=clock))

            engine = LocalStepFunctions(definition(FUNCTION, "unused-check"), invoke=wake, clock=clock)
            scheduler.waits = StepFunctionsWaits(engine, engine.state_machine_arn)
            dag = LocalDagLoader(folder).load_file(f"{DAG_ID}.py")[DAG_ID]
            doc = serialize_dag(dag, relative_fileloc=f"{DAG_ID}.py", file_hash="h")
            register_parsed_file(store, ParsedFile(relative_path=f"{DAG_ID}.py", file_hash="h", dags=[doc]),
                                 now=clock())
            set_paused(store, DAG_ID, False)
            minute = start.replace(second=0, microsecond=0)
            tick = minute + dt.timedelta(seconds=rng.uniform(0, 60))
            last_due = minute + dt.timedelta(minutes=runs + 1)
            while clock() < last_due + TICK:
                inflight.wait_idle()
                engine.run_due()  # executions just started enter their Wait
                wake_at = engine.next_wake()
                if tick <= clock():
                    minute += TICK
                    tick = minute + dt.timedelta(seconds=rng.uniform(0, 60))
                    continue
                if wake_at is not None and wake_at < tick:
                    clock.jump_to(wake_at)
                    engine.run_due()
                    continue
                clock.jump_to(tick)
                time.sleep(latency.event_to_start())  # EventBridge -> the scheduler function, warm
                scheduler.run_pass()
            inflight.wait_idle()
            return _delays(store, after=start.replace(second=0, microsecond=0) + TICK)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def local(minutes: float) -> list[dict[str, float]]:
    from updraft.local.system import LocalOptions, LocalSystem
    from updraft.scheduling.commands import set_paused

    folder = Path(tempfile.mkdtemp(prefix="updraft-wakeups-local-"))
    (folder / f"{DAG_ID}.py").write_text(DAG_FILE)
    system = LocalSystem(LocalOptions(dags_folder=str(folder), workers=2, tick_seconds=TICK.total_seconds(),
                                      write_endpoint=False), say=lambda line: None)
    system.start()
    try:
        store = system.services.store
        deadline = time.monotonic() + 60
        while store.get_dag_meta(DAG_ID) is None:
            if time.monotonic() > deadline:
                raise TimeoutError("the DAG was not parsed within 60 s")
            time.sleep(0.2)
        set_paused(store, DAG_ID, False)
        unpaused = _real_now()
        time.sleep(minutes * 60)
        return _delays(store, after=unpaused)
    finally:
        system.stop()
        shutil.rmtree(folder, ignore_errors=True)


def _delays(store: Any, *, after: dt.datetime) -> list[dict[str, float]]:
    """Per scheduled run due after ``after`` and started: run and first-task start delays, in seconds."""
    out = []
    for run in store.list_runs(DAG_ID):
        if run.run_type != "scheduled" or run.run_after <= after or run.start_date is None:
            continue
        work = [ti for ti in store.get_run_tis(DAG_ID, run.run_id) if ti.start_date is not None]
        out.append({"run_after": run.run_after.isoformat(),
                    "run_s": (run.start_date - run.run_after).total_seconds(),
                    "task_s": (min(ti.start_date for ti in work) - run.run_after).total_seconds()
                    if work else float("nan")})
    return sorted(out, key=lambda d: str(d["run_after"]))


def _percentile(values: list[float], q: float) -> float:
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def summarize(delays: list[dict[str, float]]) -> dict[str, Any]:
    row: dict[str, Any] = {"runs": len(delays)}
    for what in ("run_s", "task_s"):
        values = [d[what] for d in delays if d[what] == d[what]]
        if values:
            row[what] = {"p50": round(_percentile(values, 50), 2), "p99": round(_percentile(values, 99), 2),
                         "max": round(max(values), 2)}
    return row


def render(label: str, results: dict[str, dict[str, Any]]) -> str:
    lines = [f"Start delay after due, minutely DAG, tick every 60 s ({label}); seconds",
             "", "| where | runs | run start p50 | p99 | max | first task start p50 | p99 | max |",
             "|---|---|---|---|---|---|---|---|"]
    for where, row in results.items():
        run, task = row.get("run_s", {}), row.get("task_s", {})
        lines.append(f"| {where} | {row['runs']} | {run.get('p50', '-')} | {run.get('p99', '-')} | "
                     f"{run.get('max', '-')} | {task.get('p50', '-')} | {task.get('p99', '-')} | "
                     f"{task.get('max', '-')} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--only", default="embedded,local")
    parser.add_argument("--local-minutes", type=float, default=3.0)
    parser.add_argument("--label", default="this tree")
    parser.add_argument("--seed", type=int, default=36)
    args = parser.parse_args()
    only = set(args.only.split(","))
    results: dict[str, dict[str, Any]] = {}
    raw: dict[str, Any] = {}
    if "embedded" in only:
        raw["embedded"] = embedded(args.runs, args.seed)
        results["embedded AWS (AWS latency)"] = summarize(raw["embedded"])
    if "local" in only:
        raw["local"] = local(args.local_minutes)
        results["updraft local"] = summarize(raw["local"])
    print(render(args.label, results))
    print(f"\nload average {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs")
    out = ROOT / "bench" / "results" / f"wakeups-{args.label.replace(' ', '-')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"summary": results, "delays": raw}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
