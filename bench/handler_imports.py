"""Cold import of every Lambda handler, each in a fresh Python process (median of 7): target < 300 ms.

usage: python bench/handler_imports.py [--repeat 7] [--importtime] [--json PATH]

Columns, all medians in milliseconds:
- ``import``: ``import functions.<name>.handler`` as Lambda's init phase runs it (interpreter start excluded);
- ``ready``: import plus everything the first invocation builds before doing work: boto3 clients, the store
  (pynamodb models), the scheduler and executors, and the modules its code path imports lazily. This is the
  rest of a cold start's fixed cost; it is reported, not targeted, because it is mostly boto3 (notes:
  aws-offline.md section 3);
- ``process``: wall time of the whole ``python -c`` process for the import column (interpreter start included);
- ``modules``: how many modules the import loaded.

``--importtime`` also runs each import once under ``-X importtime`` and prints its ten slowest top-level
packages (cumulative). Results go to ``bench/results/handler_imports.json`` (not committed). Nothing here reaches
AWS: clients are built with placeholder credentials and never called.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results" / "handler_imports.json"
HANDLERS = ("parser", "scheduler", "worker", "api")
TARGET_MS = 300.0

ENV = {"AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "bench",
       "AWS_SECRET_ACCESS_KEY": "bench", "UPDRAFT_TABLE": "updraft-bench", "UPDRAFT_BUCKET": "updraft-bench",
       "UPDRAFT_WORKER_FUNCTION": "updraft-worker"}

# What the first invocation of each handler builds before it does its work.
READY = {
    "parser": "s = h.services(); s.client(\"s3\"); s.store; s.parse_options",
    "scheduler": ("s = h.services(); s.scheduler\n"
                  "import updraft.scheduling.run_creation, updraft.scheduling.decisions.evaluation, "
                  "updraft.scheduling.decisions.ordering"),
    "worker": "s = h.services(); s.scheduler; s.loader; s.log_sink\nimport updraft.runtime.worker",
    "api": "h.services().store",
}

CHILD = """
import sys, time, json
t0 = time.perf_counter()
import functions.{name}.handler as h
t1 = time.perf_counter()
modules = len(sys.modules)
{ready}
t2 = time.perf_counter()
print(json.dumps({{"import": (t1 - t0) * 1000, "ready": (t2 - t0) * 1000, "modules": modules}}))
"""


def _env() -> dict[str, str]:
    env = {**os.environ, **ENV}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "shared"), env.get("PYTHONPATH", "")])
    return env


def measure_once(name: str) -> dict[str, float]:
    code = CHILD.format(name=name, ready=READY[name])
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=_env(), capture_output=True, text=True,
                         check=True).stdout
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", f"import functions.{name}.handler"], cwd=ROOT, env=_env(), check=True)
    wall = (time.perf_counter() - start) * 1000
    return {**json.loads(out.strip().splitlines()[-1]), "process": wall}


def importtime(name: str, top: int = 10) -> list[tuple[str, float]]:
    """The handler's slowest direct imports, by cumulative time from ``-X importtime``."""
    result = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import functions.{name}.handler"],
                            cwd=ROOT, env=_env(), capture_output=True, text=True, check=True)
    # Lines come in post-order (children first, indented two spaces per level): keep the depth-2 lines that
    # precede the handler's own depth-1 line, and drop those that belonged to interpreter start-up (``site``).
    cumulative: dict[str, float] = {}
    pending: dict[str, float] = {}
    for line in result.stderr.splitlines():
        match = re.match(r"import time:\s+\d+ \|\s+(\d+) \|( *)(\S+)", line)
        if not match:
            continue
        depth, module, ms = len(match.group(2)), match.group(3), int(match.group(1)) / 1000
        if depth == 3:
            pending[module] = pending.get(module, 0) + ms
        elif depth == 1:
            if module == f"functions.{name}.handler":
                cumulative.update(pending)
            pending = {}
    return sorted(cumulative.items(), key=lambda kv: -kv[1])[:top]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--importtime", action="store_true")
    parser.add_argument("--json", type=Path, default=RESULTS)
    args = parser.parse_args()

    for name in HANDLERS:  # warm-up: write .pyc files so every measured run is the normal, compiled case
        measure_once(name)
    rows = {}
    for name in HANDLERS:
        runs = [measure_once(name) for _ in range(args.repeat)]
        rows[name] = {key: statistics.median(r[key] for r in runs) for key in ("import", "ready", "process",
                                                                                "modules")}
    load = os.getloadavg()
    print(f"Cold handler imports, fresh process each, median of {args.repeat} "
          f"(python {sys.version.split()[0]}, load {load[0]:.2f}; target import < {TARGET_MS:.0f} ms)\n")
    print("| handler | import (ms) | ready (ms) | process (ms) | modules | import < 300 ms |")
    print("|---|---|---|---|---|---|")
    for name, row in rows.items():
        ok = "yes" if row["import"] < TARGET_MS else "NO"
        print(f"| {name} | {row['import']:.0f} | {row['ready']:.0f} | {row['process']:.0f} | "
              f"{row['modules']:.0f} | {ok} |")
    if args.importtime:
        for name in HANDLERS:
            print(f"\n{name}: the handler's slowest direct imports (cumulative ms, one run)")
            for module, ms in importtime(name):
                print(f"  {module:40s} {ms:7.1f}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"repeat": args.repeat, "load": load, "python": sys.version.split()[0],
                                     "target_ms": TARGET_MS, "handlers": rows}, indent=2))
    return 0 if all(row["import"] < TARGET_MS for row in rows.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
