"""Airflow 3.3.2's own example DAG files (``airflow_examples/``, unchanged from the apache-airflow-core wheel,
Apache License 2.0): every file there loads with no import error, and the examples no other module runs end a
``dags test`` run as Airflow's semantics say (bench/examples_report.py runs all of Airflow's examples)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from updraft.local.dag_test import run_dag_test
from updraft.parsing import ParseOptions, parse_dags_folder

pytestmark = pytest.mark.usefixtures("fast_dags_test_ticks")

EXAMPLES = Path(__file__).parent / "airflow_examples"
LOGICAL_DATE = dt.datetime(2024, 3, 5, tzinfo=dt.UTC)  # minute 0: the even branch


@pytest.fixture(scope="module")
def parsed():
    return parse_dags_folder(str(EXAMPLES), ParseOptions())


def test_every_bundled_example_file_loads(parsed):
    assert {f.relative_path: [e.stacktrace for e in f.import_errors] for f in parsed.files if f.import_errors} == {}
    assert len(parsed.files) == len(list(EXAMPLES.glob("example_*.py")))
    assert all(f.dag_ids for f in parsed.files)


@pytest.mark.parametrize(("dag_id", "expected"), [
    ("example_branch_labels", dict.fromkeys(["ingest", "analyze", "check_integrity", "describe_integrity",
                                              "email_error", "save", "report"], "success")),
    # The logical date's minute is even: the branch follows empty_task_1 and skips empty_task_2.
    ("example_branch_dop_operator_v3", {"should_run": "success", "empty_task_1": "success",
                                        "empty_task_2": "skipped"}),
    ("example_display_name", {"sample_task_1": "success", "sample_task_2": "success"}),
    # example_asset_partition.py: add_partitions emits one event per region (a manual run has no partition key).
    ("ingest_regional_sales", {"ingest_sales": "success"}),
])
def test_example_runs(dag_id, expected):
    result = run_dag_test(dag_id, dags_folder=str(EXAMPLES), logical_date=LOGICAL_DATE)
    assert {label: ti["state"] for label, ti in result.tasks.items()} == expected
    assert result.run_state == "success"
