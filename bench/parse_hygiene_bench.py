"""What a DAG file that leaves a process behind costs its parse, against a plain file.

usage: python bench/parse_hygiene_bench.py [--repeat 10] [--timeout 3]

The parser must not wait for a forked grandchild that still holds the result pipe (it would turn a valid DAG into
a timeout) and must kill a subprocess the file started (tests/unit/parsing/test_parse_child_hygiene.py asserts
both outcomes; wall times are measured here, never asserted in a timed test). Each kind is parsed ``--repeat``
times with one warm ``IsolatedParser``; prints p50/max per parse in milliseconds beside the parse timeout: a
figure near the timeout means the parser waited for the leftover process instead of the child's result.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE.parent / "shared")]

DAG = 'with DAG(dag_id="{0}", schedule=None):\n    pass\n'
KINDS = {
    "plain": "from airflow.sdk import DAG\n" + DAG.format("plain"),
    "forks a sleeping child": ("import os, time\nfrom airflow.sdk import DAG\nif os.fork() == 0:\n"
                               "    time.sleep(1000)\n    os._exit(0)\n" + DAG.format("forker")),
    "starts a subprocess": ('import subprocess\nfrom airflow.sdk import DAG\nsubprocess.Popen(["sleep", "1000"])\n'
                            + DAG.format("spawner")),
}


def measure(folder: Path, body: str, repeat: int, timeout_s: float) -> list[float]:
    from updraft.parsing.isolation import IsolatedParser
    from updraft.parsing.options import FileJob, ParseOptions

    path = folder / "dag.py"
    path.write_text(body)
    job = FileJob(str(path), "dag.py", str(folder))
    times = []
    with IsolatedParser(ParseOptions(timeout_s=timeout_s)) as parser:
        parser.parse([job])  # the fork server's warm-up is not the file's cost
        for _ in range(repeat):
            started = time.perf_counter()
            [result] = parser.parse([job])
            times.append((time.perf_counter() - started) * 1000)
            if result.import_errors:
                raise SystemExit(f"{body!r} did not parse: {result.import_errors[0].message}")
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--timeout", type=float, default=3.0)
    args = parser.parse_args()
    print("| DAG file | p50 (ms) | max (ms) | parse timeout (ms) |\n|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for kind, body in KINDS.items():
            times = measure(Path(tmp), body, args.repeat, args.timeout)
            print(f"| {kind} | {statistics.median(times):.0f} | {max(times):.0f} | {args.timeout * 1000:.0f} |")


if __name__ == "__main__":
    main()
