"""`updraft dags test` on virtualenv and external-Python tasks (issue 17), offline: venvs with nothing to install
(with and without system site packages, one cached) and this interpreter as the external Python.

``dags_test_virtualenv/virtualenv_tasks.py``'s ``check`` task asserts what the callables received and returned
(op_args/op_kwargs, a rendered templates_dict, ``ds``/``logical_date`` from the context, string_args, each
serializer, another interpreter); the table below follows Airflow 3.3's operators: a branch skips its other direct
downstream tasks (try 0), ``skip_on_exit_code`` skips the task itself (try 1), an exception in the callable fails
it with the callable's message.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from updraft.local.dag_test import run_dag_test
from updraft.parsing import ParseOptions, parse_dags_folder

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fast_dags_test_ticks")]

HERE = Path(__file__).parent
FOLDER = HERE / "dags_test_virtualenv"
LOGICAL_DATE = dt.datetime(2024, 3, 5, tzinfo=dt.UTC)
OK, SKIP, SKIPPED_ITSELF, FAIL = ("success", 1), ("skipped", 0), ("skipped", 1), ("failed", 1)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    logs = tmp_path_factory.mktemp("venv-logs")
    result = run_dag_test("virtualenv_tasks", dags_folder=str(FOLDER), logical_date=LOGICAL_DATE,
                          log_folder=str(logs))
    text = "\n".join(p.read_text(errors="replace") for p in logs.rglob("*") if p.is_file())
    return result, text


def test_states_and_try_numbers(run):
    result, _ = run
    assert {label: (ti["state"], ti["try_number"]) for label, ti in result.tasks.items()} == {
        "venv_add": OK, "cached": OK, "external": OK, "check": OK,
        "pick": OK, "left": OK, "right": SKIP,
        "branch_venv": OK, "one": SKIP, "two": OK,
        "skips": SKIPPED_ITSELF, "fails": FAIL,
    }
    assert result.run_state == "failed"


def test_the_callables_error_and_output_reach_the_task_log(run):
    _, log = run
    assert "Process returned non-zero exit status 1.\nbroken on purpose" in log
    assert "Process exited with code 3. Skipping." in log
    assert "Executing cmd:" in log and " -m venv " in log


def test_the_tutorial_virtualenv_example_loads():
    """Airflow's tutorial_taskflow_api_virtualenv.py (copied unchanged; it installs from PyPI when run)."""
    parsed = parse_dags_folder(str(HERE / "airflow_examples_virtualenv"), ParseOptions())
    assert [(f.dag_ids, f.import_errors) for f in parsed.files] == [(["tutorial_taskflow_api_virtualenv"], [])]
