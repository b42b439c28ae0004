"""What importing a DAG file costs: the work a try's child does again for every try, before its task runs.

usage: python bench/dag_import_bench.py [FILE.py ...] [--batches 7] [--per-batch 10]

A try's child imports its DAG file, as Airflow's task runner does, so a wide DAG's operators are built again for
every try of every one of its tasks: in a local fan-out of 202 no-op tasks that import was ~95% of a child's CPU
and a fifth of a task's. For each file (by default the Airflow benchmark DAGs, ``e2e_bench.BENCH_DAGS``), in this
process with the runtime imported as a task server has it: the CPU milliseconds an import takes (the best and the
median of ``--batches`` batches; this shared machine's speed moves them from minute to minute), and the Python
function calls it makes per operator, counted by the profiler over one import (a count the machine's load does
not move: compare trees by it). Prints a markdown table.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import importlib.util
import itertools
import pstats
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "shared")]

_names = itertools.count()


def import_once(path: Path) -> Any:
    """Run ``path`` as a fresh module (a new name each time, as a child's import is its first) and return it;
    the DAGs it registers are the only ones registered (as the loader resets the registry before a file)."""
    from updraft.sdk._internal import dag_registry

    dag_registry.reset()
    spec = importlib.util.spec_from_file_location(f"updraft_bench_dag_{next(_names)}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def operators_in(module: Any) -> int:
    """The tasks of the DAGs the import of ``module`` defined (a ``@dag`` function's DAG is registered, not a
    module global)."""
    from updraft.sdk._internal import dag_registry
    from updraft.sdk.dag import DAG

    dags = {id(d): d for d in [*vars(module).values(), *dag_registry.registered_dags()] if isinstance(d, DAG)}
    return sum(len(d.task_dict) for d in dags.values())


def measure(path: Path, *, batches: int, per_batch: int) -> dict[str, Any]:
    """``path``'s import: CPU ms (best and median batch), its operators and the Python calls per operator."""
    import_once(path)  # the first import compiles the file and warms what it imports
    spent = []
    for _ in range(batches):
        gc.collect()
        started = time.process_time()
        for _ in range(per_batch):
            import_once(path)
        spent.append((time.process_time() - started) * 1000 / per_batch)
    profile = cProfile.Profile()
    profile.enable()
    module = import_once(path)
    profile.disable()
    operators = operators_in(module)
    calls = sum(stat[1] for stat in pstats.Stats(profile).stats.values())  # type: ignore[attr-defined]
    return {"file": path.name, "operators": operators, "best_ms": round(min(spent), 2),
            "median_ms": round(statistics.median(spent), 2),
            "calls_per_operator": round(calls / operators, 1) if operators else None}


def render(rows: list[dict[str, Any]]) -> str:
    lines = ["| DAG file | operators | import, best (CPU ms) | median | Python calls an operator |",
             "|---|---|---|---|---|"]
    lines += [f"| {r['file']} | {r['operators']} | {r['best_ms']} | {r['median_ms']} | {r['calls_per_operator']} |"
              for r in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    from bench.e2e_bench import BENCH_DAGS, DAGS

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--batches", type=int, default=7)
    parser.add_argument("--per-batch", type=int, default=10)
    args = parser.parse_args(argv)
    import updraft.runtime.task_process  # noqa: F401  (what a task server has imported before it forks a child)

    files = args.files or [BENCH_DAGS / f"{dag_id}.py" for dag_id in DAGS]
    print(render([measure(path, batches=args.batches, per_batch=args.per_batch) for path in files]))


if __name__ == "__main__":
    main()
