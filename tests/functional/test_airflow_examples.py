"""Airflow 3.3.2's own example DAG files (``airflow_examples/``, unchanged from the apache-airflow-core wheel,
Apache License 2.0): every file there loads with no import error, and the examples no other module runs end a
``dags test`` run as Airflow's semantics say (bench/examples_report.py runs all of Airflow's examples)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from updraft.local.dag_test import run_dag_test
from updraft.parsing import ParseOptions, parse_dags_folder

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fast_dags_test_ticks")]

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
    # example_asset_with_watchers.py: its polled file watchers do not run in `dags test`; test_task succeeds.
    ("example_asset_with_watchers", {"test_task": "success"}),
])
def test_example_runs(dag_id, expected):
    result = run_dag_test(dag_id, dags_folder=str(EXAMPLES), logical_date=LOGICAL_DATE)
    assert {label: ti["state"] for label, ti in result.tasks.items()} == expected
    assert result.run_state == "success"



def test_the_mapped_state_store_example_ends_as_in_airflow():
    """AIP-103's mapped example, each instance writing its own task state; Airflow 3.3.2's `dags test` ends the
    same way. (The others retry with a real 5 s retry_delay, too slow here: bench/examples_report.py runs them
    and AIRFLOW_STATES has their Airflow ends; tests/functional/runtime/test_state_stores.py covers the
    reattach-on-retry pattern.) No logical date, as in the reference run: the example starts in 2026."""
    result = run_dag_test("example_task_state_store_mapped", dags_folder=str(EXAMPLES))
    assert {label: (ti["state"], ti["try_number"]) for label, ti in result.tasks.items()} == {
        "get_tables": ("success", 1), "process_table[0]": ("success", 1), "process_table[1]": ("success", 1),
        "process_table[2]": ("success", 1)}
    assert result.run_state == "success"


TUTORIALS = Path(__file__).parent / "airflow_tutorials"  # Airflow's tutorial_*.py files, unchanged


def test_object_storage_tutorial_ends_offline_as_airflow_does():
    """The tutorial imports pandas (and fetches over HTTP): offline and without pandas Airflow 3.3.2's dags test
    fails the first task on its first try and the second is upstream_failed; so does Updraft's, after the file
    (its module-level ``ObjectStoragePath("s3://aws_default@...")``) loaded."""
    result = run_dag_test("tutorial_objectstorage", dags_folder=str(TUTORIALS), logical_date=LOGICAL_DATE)
    assert {label: (ti["state"], ti["try_number"]) for label, ti in result.tasks.items()} == {
        "get_air_quality_data": ("failed", 1), "analyze": ("upstream_failed", 0)}
    assert result.run_state == "failed"


class _AllAsking(Exception):
    pass


def test_the_hitl_example_waits_for_input_as_airflows_dags_test():
    """Airflow 3.3.2's `dags test example_hitl_operator` never ends: it logs "Waiting for Human-in-the-loop input
    for tasks: [...]" for these four (even the one whose 1 s response timeout passed) until someone responds."""
    asked: list[list[str]] = []

    def on_input_wait(task_ids: list[str]) -> None:
        asked.append(task_ids)
        if len(task_ids) == 4:
            raise _AllAsking

    with pytest.raises(_AllAsking):
        run_dag_test("example_hitl_operator", dags_folder=str(EXAMPLES), logical_date=LOGICAL_DATE,
                     on_input_wait=on_input_wait)
    assert asked[-1] == ["wait_for_default_option", "wait_for_input", "wait_for_multiple_options", "wait_for_option"]


def test_custom_weight_example_starts_its_heavier_tries_first():
    """example_custom_weight imports its strategy from ``airflow.example_dags.plugins`` (the folder's plugins/, as
    Airflow lays the examples out). DecreasingPriorityStrategy gives task_1 and task_2 weight 4 at try 0, above
    task_non_custom's 2: with one worker both start before it, as Airflow's scheduler orders them."""
    starts: list[str] = []
    result = run_dag_test("example_custom_weight", dags_folder=str(EXAMPLES), logical_date=LOGICAL_DATE, workers=1,
                          on_change=lambda label, state, _try: starts.append(label) if state == "running" else None)
    # Airflow 3.3.2's `dags test example_custom_weight 2024-03-05`: success, every task success at try 1.
    assert result.run_state == "success"
    assert {label: (ti["state"], ti["try_number"]) for label, ti in result.tasks.items()} == dict.fromkeys(
        ["start", "task_1", "task_2", "task_non_custom"], ("success", 1))
    # start is an EmptyOperator: it succeeds without running.
    assert set(starts[:2]) == {"task_1", "task_2"} and starts[2:] == ["task_non_custom"]


def test_workday_timetable_example_is_scheduled_from_the_parsers_evaluation(parsed):
    """example_workday_timetable imports AfterWorkdayTimetable from ``airflow.example_dags.plugins.workday``. The
    parse stores it as evaluated (a horizon of runs, Airflow's dates: each workday's interval, run at its end) and
    `dags test` ends as Airflow 3.3.2's `dags test example_workday_timetable 2024-03-05`: success, run_this at try 1."""
    document = next(d for f in parsed.files for d in f.dags if d["dag"]["dag_id"] == "example_workday_timetable")
    runs = document["timetable_horizon"]["runs"]
    for run_after, start, end in runs:
        start_day = dt.datetime.fromisoformat(start)
        assert start_day.weekday() < 5 and dt.datetime.fromisoformat(end) - start_day == dt.timedelta(days=1)
        assert run_after == end
    assert [dt.datetime.fromisoformat(r[1]).weekday() for r in runs[:10]].count(5) == 0
    result = run_dag_test("example_workday_timetable", dags_folder=str(EXAMPLES), logical_date=LOGICAL_DATE)
    assert result.run_state == "success"
    assert {label: (ti["state"], ti["try_number"]) for label, ti in result.tasks.items()} == {"run_this": ("success", 1)}
