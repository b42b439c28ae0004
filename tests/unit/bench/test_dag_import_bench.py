"""The DAG import benchmark (bench/dag_import_bench.py): each import builds the file's tasks anew, and the
figures are per operator of the DAGs that import defined, whether assigned to a global or registered by ``@dag``."""

from __future__ import annotations

from pathlib import Path

from bench.dag_import_bench import import_once, measure, operators_in, render

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
    path = tmp_path / "two_dags.py"
    path.write_text(FILE)
    row = measure(path, batches=2, per_batch=2)
    assert row["file"] == "two_dags.py" and row["operators"] == 5
    assert 0 < row["best_ms"] <= row["median_ms"]
    assert row["calls_per_operator"] > 20  # an operator's construction is tens of Python calls at least
    assert "| two_dags.py | 5 |" in render([row])
