"""Dollars per run of the benchmark DAGs (issue 36): the tries' own records (``runtime.usage_meter``, priced by
``updraft.cost``) beside the capacity model (issue 19), measured on the same runs, and the idle month of dev,
staging and prod.

usage: python bench/cost_bench.py [--only chain20,fanout200,deferral] [--worker-mb 2048]

Each scenario runs the real scheduler, claims and try lifecycle on the embedded AWS, as ``capacity_bench.py`` does,
with no-op tries played as the worker Lambda plays them (start, outcome, ``report_try``), each under the meter
the worker handler runs it with: so the tries' records hold what the worker handler would record, and the capacity
recorder charges every request of the same run by DynamoDB's rules (the model). The deferral scenario's task defers
for an hour (a Wait state), its wait ends (the clock moved an hour), and it resumes and succeeds.

Two differences to read the table with: moto answers ``ConsumedCapacity`` with a constant per request (0.5 or 1
unit) where DynamoDB reports what the item's size costs, so the records' units are moto's; and a try's duration
on moto is moto's (a few ms per request and Python's own time) where the model assumes 40 ms plus 6 ms per request.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "shared")]
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
os.environ.setdefault("AWS_ACCESS_KEY_ID", "bench")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench")

from bench.capacity_bench import Setup, _setup, _work_dag, chain, fan_out  # noqa: E402
from bench.capacity_model import figures  # noqa: E402
from bench.capacity_recorder import CapacityRecorder, role  # noqa: E402

REGION = "us-east-1"
HOUR = dt.timedelta(hours=1)


def deferral() -> Any:
    """One task that defers for an hour (a DateTimeTrigger: the state machine's Wait), then succeeds."""
    from bench.capacity_bench import Scenario

    def build() -> Setup:
        dag, work = _work_dag("deferral")
        with dag:
            work.override(task_id="wait_an_hour")()
        return _setup("deferral", [dag], parallelism=32, pools={})

    return Scenario("1-hour deferral", build)


class MeteredWorkers:
    """Each try as the worker Lambda plays it (``tests/functional/scheduling/harness.LambdaWorkers``: no task code),
    under the meter the worker handler runs it with (``worker_mb`` of memory)."""

    def __init__(self, setup: Setup, worker_mb: int) -> None:
        self.setup = setup
        self.worker_mb = worker_mb
        self.tries = 0

    def outcome(self, item: Any) -> Any:
        from updraft.model.deferrals import Deferral
        from updraft.model.states import TaskInstanceState
        from updraft.scheduling import TryResult

        ti = self.setup.store.get_ti(item.key) if item.key.dag_id == "deferral" else None
        if ti is not None and ti.next_method is None:  # the first run of the try: defer
            now = self.setup.clock()
            return TryResult(TaskInstanceState.DEFERRED, deferral=Deferral(
                classpath="airflow.providers.standard.triggers.temporal.DateTimeTrigger",
                kwargs={"moment": (now + HOUR).isoformat()}, next_method="execute_complete", next_kwargs=None,
                resume_at=now + HOUR, times_out=False, created_at=now))
        return TryResult(TaskInstanceState.SUCCESS)

    def run_one(self, item: Any) -> bool:
        from updraft.runtime import usage_meter
        from updraft.runtime.worker import report_try, run_for
        from updraft.scheduling import start_try

        meter = usage_meter.UsageMeter(item.try_number, executor="lambda", memory_mb=self.worker_mb)
        with usage_meter.metering(meter):
            started = start_try(self.setup.store, item.key, item.try_id, now=self.setup.clock())
            if not started:
                return False
            self.tries += 1
            run = run_for(item, self.setup.store)
            result = usage_meter.with_usage(self.outcome(item))
            report_try(item, result, store=self.setup.store, scheduler=self.setup.scheduler,
                       dag=self.setup.scheduler.dag(run.dag_id, run.dag_hash), started=started,
                       now_fn=self.setup.clock)
        return True

    def drain(self) -> None:
        while items := self.setup.executor.take():
            for item in items:
                self.run_one(item)


def drive(setup: Setup, workers: MeteredWorkers) -> int:
    """Scheduler passes and workers until every run ends (a deferred try's wait ended by moving the clock an hour
    and resuming it, as the state machine's invoke does); the scheduler passes made."""
    from updraft.model.states import FINISHED_RUN_STATES, TaskInstanceState
    from updraft.scheduling import resume_try

    passes = 0
    for _ in range(10_000):
        with role("scheduler"):
            setup.scheduler.run_pass()
            passes += 1
        with role("worker"):
            workers.drain()
        with role("bench"):
            runs = [setup.store.get_run(r.dag_id, r.run_id) for r in setup.runs]
            deferred = [ti for r in setup.runs for ti in setup.store.get_run_tis(r.dag_id, r.run_id)
                        if ti.state == TaskInstanceState.DEFERRED]
        if all(r.state in FINISHED_RUN_STATES for r in runs):
            return passes
        if deferred:
            setup.clock.advance(seconds=HOUR.total_seconds() + 1)
            with role("worker"):  # the resume invocation (its cost: the run's estimated overhead)
                for ti in deferred:
                    resume_try(setup.store, ti.key, ti.try_id, now=setup.clock())
                    setup.scheduler.schedule_run(ti.dag_id, ti.run_id)
    raise AssertionError("the scenario did not finish")


def measure(scenario: Any, recorder: CapacityRecorder, worker_mb: int) -> dict[str, Any]:
    from updraft.cost.runs import run_cost

    setup = scenario.build()
    recorder.take()
    workers = MeteredWorkers(setup, worker_mb)
    started = time.perf_counter()
    passes = drive(setup, workers)
    charges = [c for c in recorder.take() if c.role != "bench"]
    model = figures(scenario.name, charges, tasks=workers.tries, scheduler_passes=passes)
    (run,) = setup.runs
    cost = run_cost(setup.store, run.dag_id, run.run_id, region=REGION)
    usages = [t.usage for t in cost.tries]
    print(f"{scenario.name}: {workers.tries} tries, {passes} passes, {time.perf_counter() - started:.0f} s on moto",
          file=sys.stderr)
    by_name: dict[str, float] = {}
    for line in cost.metered.lines:
        by_name[line.name] = by_name.get(line.name, 0.0) + line.usd
    return {
        "scenario": scenario.name, "tries": workers.tries, "passes": passes,
        "recorded_requests": sum(u.dynamodb_requests for u in usages),
        "recorded_wru": sum(u.dynamodb_write_units for u in usages),
        "recorded_rru": sum(u.dynamodb_read_units for u in usages),
        "recorded_gb_s": sum(u.lambda_gb_s for u in usages),
        "recorded_transitions": sum(u.sfn_transitions for u in usages),
        "tries_dynamodb_usd": by_name.get("DynamoDB writes", 0.0) + by_name.get("DynamoDB reads", 0.0),
        "tries_lambda_usd": by_name.get("Lambda requests", 0.0) + by_name.get("Lambda compute", 0.0),
        "tries_other_usd": sum(v for k, v in by_name.items() if not k.startswith(("DynamoDB", "Lambda"))),
        "tries_usd": cost.metered.usd, "overhead_usd": cost.overhead.usd, "run_usd": cost.usd,
        "unmetered": cost.unmetered,
        "model_requests": model.requests_per_task * model.tasks,
        "model_wru": model.wcu_per_task * model.tasks, "model_rru": model.rcu_per_task * model.tasks,
        "model_worker_requests": sum(1 for c in charges if c.role == "worker" and c.request and c.partition != "-"),
        **{f"model_{who}_{kind}": sum(getattr(c, f"{kind}_units") + (sum(u for *_, u in c.index_units)
                                                                     if kind == "write" else 0)
                                      for c in charges if c.role == who)
           for who in ("worker", "scheduler") for kind in ("write", "read")},
        "model_dynamodb_usd": model.usd_per_1000_tasks_dynamodb * model.tasks / 1000,
        "model_lambda_usd": model.usd_per_1000_tasks_lambda * model.tasks / 1000,
    }


def idle_table() -> list[dict[str, Any]]:
    from infra.config import ENVIRONMENTS
    from updraft.cost.idle import IdleInputs, idle_cost

    return [idle_cost(IdleInputs(name=s.name, tick_seconds=s.tick_minutes * 60,
                                 scheduler_memory_mb=s.scheduler.memory_mib, region=REGION,
                                 architecture=s.architecture, interface_endpoint_azs=s.interface_endpoint_azs()))
            for s in ENVIRONMENTS.values()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="chain20,fanout200,deferral")
    parser.add_argument("--worker-mb", type=int, default=2048, help="the worker's memory (prod's: 2048)")
    args = parser.parse_args()

    from moto import mock_aws

    from updraft.local import moto_speedups
    from updraft.runtime import usage_meter

    usage_meter.install()  # before any client: every client of the run reports to the tries' meters
    moto_speedups.apply()
    chosen = {"chain20": chain(20), "fanout200": fan_out(200), "deferral": deferral()}
    rows = []
    with mock_aws(), CapacityRecorder().recording() as recorder:
        for name in args.only.split(","):
            rows.append(measure(chosen[name], recorder, args.worker_mb))

    print(f"\nCost per run (issue 36), {REGION} prices, worker {args.worker_mb} MB. Recorder: the tries' own records "
          "priced, plus the run's scheduling overhead (estimated); model: the capacity model's charges of the same "
          "run (every request, scheduler's included).\n")
    print("| scenario | tries | recorder: tries $ (DynamoDB / Lambda / other) | + overhead $ (est.) | recorder $/run | "
          "model $/run (DynamoDB / Lambda) | requests: tries' records / model (worker's) / model (all) | "
          "WRU records / model | RRU records / model |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['scenario']} | {r['tries']} | ${r['tries_usd']:.6f} (${r['tries_dynamodb_usd']:.6f} / "
              f"${r['tries_lambda_usd']:.6f} / ${r['tries_other_usd']:.6f}) | ${r['overhead_usd']:.6f} | "
              f"**${r['run_usd']:.6f}** | **${r['model_dynamodb_usd'] + r['model_lambda_usd']:.6f}** "
              f"(${r['model_dynamodb_usd']:.6f} / ${r['model_lambda_usd']:.6f}) | "
              f"{r['recorded_requests']:.0f} / {r['model_worker_requests']:.0f} / {r['model_requests']:.0f} | "
              f"{r['recorded_wru']:.0f} / {r['model_wru']:.0f} | {r['recorded_rru']:.1f} / {r['model_rru']:.1f} |")
    print("\nThe model's units by role (what calibrates the overhead estimate: updraft.cost.runs):")
    for r in rows:
        worker = f"{r['model_worker_write']:.0f} WRU / {r['model_worker_read']:.1f} RRU"
        scheduler = f"{r['model_scheduler_write']:.0f} WRU / {r['model_scheduler_read']:.1f} RRU"
        print(f"- {r['scenario']}: worker {worker} over {r['tries']} tries, scheduler {scheduler} over "
              f"{r['passes']} passes")
    for r in rows:
        if r["recorded_transitions"]:
            print(f"\n{r['scenario']}: {r['recorded_transitions']:.0f} Step Functions transitions recorded "
                  "(the model counts none).")
    print("\nIdle cost per month (nothing running):\n")
    print("| environment | $/month | made of |")
    print("|---|---|---|")
    for env in idle_table():
        parts = ", ".join(f"{line['name']} ${line['usd']:.2f}" for line in env["lines"])
        print(f"| {env['environment']} | ${env['usd_per_month']:.2f} | {parts} |")


if __name__ == "__main__":
    main()
