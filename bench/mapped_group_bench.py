"""Scheduler cost of a mapped task group: one evaluation of a run whose group (3 chained tasks) has n indexes.

Each index of a task in the group counts only the same index of its upstream in the group, so a pass is
n log n in the group's size (a bisection per index), not n squared. Pure: the evaluation on a serialized DAG and
a dict standing in for the store (``tests/unit/scheduling/helpers.py``), no AWS.

    .venv/bin/python bench/mapped_group_bench.py [--sizes 100,1000,3000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "unit" / "scheduling"))

from helpers import START, FakeRunStore, make_run, serialized

from airflow.sdk import DAG, task, task_group
from updraft.model.states import TaskInstanceState


def _dag(n: int):
    with DAG("bench_mapped_group", schedule=None, start_date=START) as dag:
        @task
        def a(x):
            return x

        @task
        def b(x):
            return x

        @task
        def c(x):
            return x

        @task_group
        def group(x):
            c(b(a(x)))

        group.expand(x=list(range(n)))
    return serialized(dag)


def measure(n: int) -> tuple[float, float]:
    """(ms of the pass that expands the group's 3 x n instances, ms of the pass after every a[i] succeeded)."""
    dag = _dag(n)
    store = FakeRunStore(make_run("bench_mapped_group"))
    start = time.perf_counter()
    store.evaluate(dag)
    first = time.perf_counter() - start
    for i in range(n):
        store.set("group.a", TaskInstanceState.SUCCESS, i)
    start = time.perf_counter()
    store.evaluate(dag)
    return first * 1000, (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="100,1000,3000")
    sizes = [int(s) for s in parser.parse_args().sizes.split(",")]
    print("| indexes | instances | expanding pass (ms) | pass after a[*] succeeded (ms) |")
    print("|---|---|---|---|")
    for n in sizes:
        first, second = measure(n)
        print(f"| {n} | {3 * n} | {first:.0f} | {second:.0f} |")


if __name__ == "__main__":
    main()
