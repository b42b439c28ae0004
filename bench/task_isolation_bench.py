"""What running a try's user code in a child process costs (runtime/supervisor.py), against running it in-process.

usage: python bench/task_isolation_bench.py [--tries 30]

On moto's DynamoDB (in this process), one DAG with a PythonOperator that pushes an XCom, pulls one and reads a
Variable (so the store proxy is exercised): ``--tries`` tries of it through ``handle_dispatch`` in-process and
isolated (a fork of the warm task server per try, the store through the proxy), alternating. The first
isolated try also waits for the task server's imports (shown apart). Prints p50/p95/mean per try in
milliseconds and the difference; the machine's load changes the figures: compare runs made on the same machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT), str(ROOT / "shared")]

BODY = """
def work(ti):
    ti.xcom_push(key="seen", value=ti.xcom_pull(task_ids="work", key="seen", default=0))
    from airflow.sdk import Variable
    return Variable.get("bench_var", default="none")

with DAG("iso_bench", schedule=None, start_date=START):
    PythonOperator(task_id="work", python_callable=work)
"""


def _time_tries(env, tries: int, *, in_process: bool) -> list[float]:
    from updraft.runtime.worker import handle_dispatch

    times = []
    for _ in range(tries):
        env.trigger("iso_bench")
        env.scheduler.run_pass()
        (item,) = env.executor.take()
        started = time.perf_counter()
        result = handle_dispatch(item, store=env.store, loader=env.loader, scheduler=env.scheduler,
                                 now_fn=env.clock, log_sink=env.logs, in_process=in_process)
        times.append((time.perf_counter() - started) * 1000)
        assert result is not None and result.state.value == "success", result
        env.executor.take()
        env.clock.advance(seconds=1)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tries", type=int, default=30)
    args = parser.parse_args()
    from moto import mock_aws

    from tests.functional.runtime.rt_harness import RuntimeEnv
    from updraft.runtime.supervisor import shared_supervisor

    with mock_aws(), tempfile.TemporaryDirectory() as tmp:
        env = RuntimeEnv(Path(tmp))
        env.add("iso_bench", BODY)
        env.store.set_variable("bench_var", "v", None)
        _time_tries(env, 2, in_process=True)  # warm the DAG module and the store's caches
        started = time.perf_counter()
        shared_supervisor().start()
        server_start = (time.perf_counter() - started) * 1000
        first = _time_tries(env, 1, in_process=False)[0]
        in_process, isolated = [], []
        for _ in range(args.tries):  # alternating, so the machine's load changes both alike
            in_process += _time_tries(env, 1, in_process=True)
            isolated += _time_tries(env, 1, in_process=False)
    rows = [("in-process", in_process), ("child process", isolated)]
    print(f"{'per try (ms)':<16}{'p50':>9}{'p95':>9}{'mean':>9}")
    for name, values in rows:
        p95 = statistics.quantiles(values, n=20)[-1] if len(values) > 1 else values[0]
        print(f"{name:<16}{statistics.median(values):9.1f}{p95:9.1f}{statistics.fmean(values):9.1f}")
    print(f"{'overhead':<16}{statistics.median(isolated) - statistics.median(in_process):9.1f}")
    print(f"task server start: {server_start:.0f} ms (once per worker process); first isolated try: {first:.0f} ms")


if __name__ == "__main__":
    main()
