"""The DAG import benchmark (bench/dag_import_bench.py): each import builds the file's tasks anew, and the
figures are per operator of the DAGs that import defined, whether assigned to a global or registered by ``@dag``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench.dag_import_bench import import_once, operators_in, render

ROOT = Path(__file__).resolve().parents[3]

FILE = '''
from datetime import datetime

from airflow.sdk import DAG, dag, task
from airflow.providers.standard.operators.empty import EmptyOperator

with DAG("assigned", schedule=None, start_date=datetime(2024, 1, 1)) as assigned:
    EmptyOperator(task_id="a") >> EmptyOperator(task_id="b")


@task
def noop():
    return None


@dag(dag_id="registered", schedule=None, start_date=datetime(2024, 1, 1))
def registered():
    [noop.override(task_id=f"t{k}")() for k in range(3)]


registered()
'''


def test_an_import_builds_its_tasks_anew_and_counts_only_its_own(tmp_path: Path) -> None:
    path = tmp_path / "two_dags.py"
    path.write_text(FILE)
    first, second = import_once(path), import_once(path)
    assert first.assigned is not second.assigned
    assert first.assigned.task_dict["a"] is not second.assigned.task_dict["a"]
    assert operators_in(second) == 5  # two assigned, three registered; the first import's are not counted


def test_measure_reports_the_time_and_the_calls_per_operator(tmp_path: Path) -> None:
    """Through the command, in a process of its own: the count profiles an import, and a profiled import in a
    worker that has run hundreds of tests once spun in CPython's interpreter loop (3.11.7) until CI's limit."""
    path = tmp_path / "two_dags.py"
    path.write_text(FILE)
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "dag_import_bench.py"), str(path), "--batches", "2",
                           "--per-batch", "2"], capture_output=True, text=True, timeout=120, check=True)
    row = next(line for line in done.stdout.splitlines() if line.startswith("| two_dags.py |"))
    _, name, operators, best, median, calls, _ = (cell.strip() for cell in row.split("|"))
    assert (name, operators) == ("two_dags.py", "5")
    assert 0 < float(best) <= float(median)
    assert float(calls) > 20  # an operator's construction is tens of Python calls at least
    assert render([{"file": name, "operators": 5, "best_ms": 1.0, "median_ms": 2.0,
                    "calls_per_operator": 30.0}]).endswith("| two_dags.py | 5 | 1.0 | 2.0 | 30.0 |")
