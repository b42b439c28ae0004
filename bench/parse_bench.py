"""Parse benchmark: Updraft's isolated parser beside Airflow 3.3.2's figures.

usage: python bench/parse_bench.py [--sizes 100,1000] [--kinds empty,task] [--repeat 3]

For each size and kind it generates DAG files with ``bench/gen_dags.py`` (the
same generator the Airflow baseline used), then, in a fresh Python process per
case so peak-memory figures do not leak between cases, measures:

- the fork server's start (SDK imports and warm-up, paid once per process);
- the whole folder parse, every file in its own forked child, ``parallelism``
  children at once (default: CPU count), median of ``--repeat`` runs;
- the work inside each child (run the file + validate + serialize);
- peak RSS of the parent and the largest child;
- re-parsing ONE changed file with the warm parser: wall time, the file's own
  work inside the child, and the difference (the isolation overhead);
- the cold ``updraft dags list -o json`` CLI wall (process start included).

Prints a markdown table and writes ``bench/results/parse.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "parse.json"

# Airflow 3.3.2 on this machine kind (notes: airflow-baseline.md, section a).
AIRFLOW = {
    "dagbag_s": {"100/empty": 0.24, "100/task": 0.44, "1000/empty": 1.78, "1000/task": 3.61},
    "dagbag_rss_mb": {"100/empty": 130, "100/task": 132, "1000/empty": 161, "1000/task": 171},
    "serialize_s": {"100/empty": 0.16, "100/task": 0.24, "1000/empty": 1.42, "1000/task": 2.16},
    "reserialize_cli_s": {"100/empty": 2.95, "100/task": 3.28, "1000/empty": 8.76, "1000/task": 11.37},
    "dag_processor_s": {"100/empty": 10.2, "100/task": 11.4, "1000/empty": 55.4, "1000/task": 71.5},
    "dag_processor_rss_mb": {"100/empty": 167, "100/task": 168, "1000/empty": 170, "1000/task": 171},
}


def generate(folder: Path, n: int, kind: str) -> None:
    subprocess.run([sys.executable, str(HERE / "gen_dags.py"), str(folder), str(n), kind], check=True)


def run_case(folder: Path, repeat: int, parallelism: int | None) -> dict:
    """Measure one generated folder inside this (fresh) process."""
    t0 = time.perf_counter()
    from updraft.parsing.folder import list_dag_files, parse_dags_folder
    from updraft.parsing.isolation import IsolatedParser
    from updraft.parsing.options import ParseOptions

    parser = IsolatedParser(ParseOptions(parallelism=parallelism))
    # The fork server starts (imports the SDK, runs the warm-up DAG) before its
    # first answer: time it with one file, once per process.
    first_jobs, _ = list_dag_files(folder)
    parser.parse_one(first_jobs[0])
    warm_up_s = time.perf_counter() - t0

    walls, child_work = [], []
    for i in range(repeat):
        # Each repeat parses with the previous results dropped, as a fresh
        # `updraft dags list` would: the parent's size drives fork() cost.
        result = parse_dags_folder(folder, parser=parser)
        walls.append(result.duration_s)
        child_work.append(sum(f.duration_s for f in result.files))
        if result.import_errors:
            raise SystemExit(f"benchmark files failed to parse: {result.import_errors[0].message}")
        max_child_kb = max(f.peak_rss_kb or 0 for f in result.files)
        n_files, n_dags = len(result.files), len(result.dags)
        if i < repeat - 1:
            del result

    # Re-parse one changed file with the warm parser.
    jobs, _ = list_dag_files(folder)
    job = jobs[len(jobs) // 2]
    path = Path(job.path)
    original = path.read_text()
    reparse_wall, reparse_own = [], []
    for i in range(max(10, repeat * 5)):
        path.write_text(original + f"\n# changed {i}\n")
        t = time.perf_counter()
        parsed = parser.parse_one(job)
        reparse_wall.append(time.perf_counter() - t)
        reparse_own.append(parsed.duration_s)
        assert not parsed.import_errors, parsed.import_errors
    path.write_text(original)

    # In-process import of the same file, no isolation: the file's own import cost.
    from updraft.parsing.loader import load_dag_file
    from updraft.parsing.options import ParseOptions as _PO

    t = time.perf_counter()
    load_dag_file(job, _PO())
    in_process_s = time.perf_counter() - t

    return {
        "files": n_files,
        "dags": n_dags,
        "parallelism": parser.options.workers,
        "warm_up_s": warm_up_s,
        "parse_wall_s": statistics.median(walls),
        "parse_wall_min_s": min(walls),
        "parse_wall_all_s": walls,
        "child_work_s_total": statistics.median(child_work),
        "parent_peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "max_child_rss_mb": max_child_kb / 1024,
        "reparse_one_wall_ms": statistics.median(reparse_wall) * 1000,
        "reparse_one_own_ms": statistics.median(reparse_own) * 1000,
        "reparse_one_overhead_ms": statistics.median(w - o for w, o in zip(reparse_wall, reparse_own, strict=True))
        * 1000,
        "in_process_first_import_ms": in_process_s * 1000,
    }


def cli_wall(folder: Path, runs: int = 2) -> float:
    """Best of ``runs`` cold CLI invocations (the machine may be shared)."""
    return min(_cli_wall_once(folder) for _ in range(runs))


def _cli_wall_once(folder: Path) -> float:
    exe = Path(sys.executable).with_name("updraft")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-c", "from updraft.cli import main; main()"]
    t = time.perf_counter()
    subprocess.run([*cmd, "dags", "list", "--dags-folder", str(folder), "-o", "json"], check=True, capture_output=True)
    return time.perf_counter() - t


def fmt_s(x: float) -> str:
    return f"{x:.2f} s"


def per_file_ms(case: dict, metric: str) -> str:
    return f"{case[metric] / case['files'] * 1000:.1f} ms/file"


def table(cases: dict) -> str:
    keys = list(cases)
    head = "| what | " + " | ".join(k.replace("/task", " @task").replace("/", " ") for k in keys) + " |"
    sep = "|---" * (len(keys) + 1) + "|"
    rows = [head, sep]

    def row(label, fn):
        rows.append(f"| {label} | " + " | ".join(fn(k) for k in keys) + " |")

    def af(metric, unit):
        return lambda k: f"{AIRFLOW[metric][k]:g} {unit}" if k in AIRFLOW[metric] else "-"

    row("Airflow `dag-processor` (one process per file, 2 at a time)", af("dag_processor_s", "s"))
    row("Airflow DagBag in one process (no isolation)", af("dagbag_s", "s"))
    row("Airflow `dags reserialize` CLI wall", af("reserialize_cli_s", "s"))
    row(
        "Airflow peak RSS (DagBag / dag-processor)",
        lambda k: (
            f"{AIRFLOW['dagbag_rss_mb'][k]} / {AIRFLOW['dag_processor_rss_mb'][k]} MB"
            if k in AIRFLOW["dagbag_rss_mb"]
            else "-"
        ),
    )
    row(
        "**Updraft parse, forked child per file** (parallelism {})".format(cases[keys[0]]["parallelism"]),
        lambda k: (
            f"**{fmt_s(cases[k]['parse_wall_s'])}** ({per_file_ms(cases[k], 'parse_wall_s')}; "
            f"best {fmt_s(cases[k]['parse_wall_min_s'])})"
        ),
    )
    row(
        "  of which work inside children (sum, run+validate+serialize)",
        lambda k: f"{fmt_s(cases[k]['child_work_s_total'])} ({per_file_ms(cases[k], 'child_work_s_total')})",
    )
    row(
        "Updraft fork server start + first file (once per process)",
        lambda k: fmt_s(cases[k]["warm_up_s"]),
    )
    row("Updraft `updraft dags list -o json` CLI wall (cold, best of 2)", lambda k: fmt_s(cases[k]["cli_wall_s"]))
    row(
        "Updraft peak RSS parent / largest child",
        lambda k: f"{cases[k]['parent_peak_rss_mb']:.0f} / {cases[k]['max_child_rss_mb']:.0f} MB",
    )
    row(
        "Updraft re-parse 1 changed file (warm): wall / file's own work / overhead",
        lambda k: (
            f"{cases[k]['reparse_one_wall_ms']:.1f} / {cases[k]['reparse_one_own_ms']:.1f} / "
            f"{cases[k]['reparse_one_overhead_ms']:.1f} ms"
        ),
    )
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100,1000")
    ap.add_argument("--kinds", default="empty,task")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--parallelism", type=int, default=None)
    ap.add_argument("--case", help=argparse.SUPPRESS)  # internal: measure one folder in this process
    args = ap.parse_args()

    if args.case:
        print(json.dumps(run_case(Path(args.case), args.repeat, args.parallelism)))
        return

    cases: dict[str, dict] = {}
    work = Path(tempfile.mkdtemp(prefix="updraft-parse-bench-"))
    try:
        for n in [int(s) for s in args.sizes.split(",")]:
            for kind in args.kinds.split(","):
                key = f"{n}/{kind}"
                folder = work / f"{n}_{kind}"
                generate(folder, n, kind)
                cmd = [sys.executable, __file__, "--case", str(folder), "--repeat", str(args.repeat)]
                if args.parallelism:
                    cmd += ["--parallelism", str(args.parallelism)]
                out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
                cases[key] = json.loads(out.strip().splitlines()[-1])
                cases[key]["cli_wall_s"] = cli_wall(folder)
                c = cases[key]
                print(
                    f"{key}: parse {c['parse_wall_s']:.2f}s, re-parse one {c['reparse_one_wall_ms']:.1f} ms",
                    file=sys.stderr,
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)

    text = table(cases)
    print(text)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]},
                "cases": cases,
                "airflow_3_3_2": AIRFLOW,
                "markdown": text,
            },
            indent=2,
        )
    )
    print(f"\nwritten: {RESULTS.relative_to(HERE.parent)}", file=sys.stderr)


if __name__ == "__main__":
    main()
