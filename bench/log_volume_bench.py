"""What a try that prints a lot costs: the worker's log relay, and a whole try printing 100 MB (issue 34).

usage: python bench/log_volume_bench.py [--relay-mb 2,4,8] [--print-mb 100] [--max-seconds 300]

- relay: the worker's ``RelayedLog`` taking a log in 100-byte pieces, as the try's child sends what it prints
  (before issue 34 each piece copied the whole log so far: quadratic);
- a try printing ``--print-mb`` MB through ``handle_dispatch`` in a child of the task server (what workers do),
  the log written to a local folder (``LocalLogSink``), under the default ``UPDRAFT_TASK_LOG_MAX_BYTES``: as
  100-byte lines (``print`` in a loop) and as one ``print`` of one string. The try has an ``execution_timeout`` of
  ``--max-seconds``, so a try that cannot end is stopped and reported as such.

Prints seconds, the state the try ended in and the size of its stored log. On moto's DynamoDB in this process; the
machine's load changes the figures: compare runs made on the same machine.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT), str(ROOT / "shared")]

BODY = """
def lines(n_mb):
    line = "x" * 99
    for _ in range(n_mb * 10_000):
        print(line)

def one(n_mb):
    print("x" * (n_mb * 1_000_000))

with DAG("log_volume", schedule=None, start_date=START):
    for shape in ("lines", "one"):
        PythonOperator(task_id=shape, python_callable=globals()[shape], op_args=[{mb}],
                       execution_timeout=datetime.timedelta(seconds={seconds}))
"""


def relay_seconds(megabytes: int) -> float:
    from updraft.runtime.logs import RelayedLog

    log = RelayedLog()
    piece = "y" * 99 + "\n"
    started = time.perf_counter()
    for _ in range(megabytes * 10_000):
        log.extend(piece)
    log.text()
    return time.perf_counter() - started


def print_tries(megabytes: int, max_seconds: int) -> list[tuple[str, float, str, int]]:
    from moto import mock_aws

    from tests.functional.runtime.rt_harness import RuntimeEnv
    from updraft.runtime.supervisor import shared_supervisor
    from updraft.runtime.worker import handle_dispatch

    rows = []
    with mock_aws(), tempfile.TemporaryDirectory() as tmp:
        env = RuntimeEnv(Path(tmp))
        env.add("log_volume", BODY.format(mb=megabytes, seconds=max_seconds))
        shared_supervisor().timeout_grace = dt.timedelta(seconds=5)
        run = env.trigger("log_volume")
        env.scheduler.run_pass()
        for item in sorted(env.executor.take(), key=lambda i: i.key.task_id):
            started = time.perf_counter()
            result = handle_dispatch(item, store=env.store, loader=env.loader, scheduler=env.scheduler,
                                     now_fn=env.clock, log_sink=env.logs)
            elapsed = time.perf_counter() - started
            path = env.logs.path(item.key, item.try_number)
            state = result.state.value if result is not None and hasattr(result, "state") else str(result)
            rows.append((item.key.task_id, elapsed, state, path.stat().st_size if path.is_file() else 0))
        assert run is not None
        shared_supervisor().close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--relay-mb", default="2,4,8")
    parser.add_argument("--print-mb", type=int, default=100)
    parser.add_argument("--max-seconds", type=int, default=300)
    args = parser.parse_args()
    sizes = [int(part) for part in args.relay_mb.split(",") if part]
    if sizes:
        print(f"{'relay of N MB in 100-byte pieces':<40}{'seconds':>10}")
        for megabytes in sizes:
            print(f"{f'{megabytes} MB':<40}{relay_seconds(megabytes):10.2f}", flush=True)
    if args.print_mb:
        print(f"\n{f'a try printing {args.print_mb} MB':<40}{'seconds':>10}  {'state':<10}{'stored log bytes':>18}")
        for shape, elapsed, state, stored in print_tries(args.print_mb, args.max_seconds):
            name = "100-byte lines" if shape == "lines" else "one print"
            print(f"{name:<40}{elapsed:10.1f}  {state:<10}{stored:>18,}", flush=True)


if __name__ == "__main__":
    main()
