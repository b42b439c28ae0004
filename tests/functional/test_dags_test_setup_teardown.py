"""`updraft dags test` on setup/teardown DAGs, with the run state, task states and try numbers Airflow 3.3 gives
(issue 17): a teardown runs after its work failed, a failing teardown fails the run only with
``on_failure_fail_dagrun``, a failing setup fails its work and its teardown (never run: try 0), and Airflow's own
example DAGs (``airflow_examples/example_setup_teardown*.py``, unchanged from the apache-airflow-core 3.3.2 wheel).

The expectations follow Airflow's ``TriggerRuleDep`` (teardowns: ``all_done_setup_success``) and
``DagRun._tis_for_dagrun_state`` (teardowns are not leaves unless ``on_failure_fail_dagrun``).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from updraft.local.dag_test import run_dag_test

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fast_dags_test_ticks")]

HERE = Path(__file__).parent
OK, FAIL, UF = ("success", 1), ("failed", 1), ("upstream_failed", 0)


def _run(dag_id: str, folder: str = "dags_test_setup_teardown"):
    result = run_dag_test(dag_id, dags_folder=str(HERE / folder), logical_date=dt.datetime(2024, 3, 5, tzinfo=dt.UTC))
    return result.run_state, {label: (ti["state"], ti["try_number"]) for label, ti in result.tasks.items()}


@pytest.mark.parametrize(("dag_id", "run_state", "tasks"), [
    # The work failed: its teardown still runs; the run fails for the work (report is upstream_failed).
    ("work_fails", "failed", {"create": OK, "work": FAIL, "delete": OK, "report": UF}),
    # A failed clean-up is not the run's failure...
    ("teardown_fails", "success", {"create": OK, "work": OK, "delete": FAIL, "report": OK}),
    # ...unless the teardown says so.
    ("teardown_fails_dagrun", "failed", {"create": OK, "work": OK, "delete": FAIL, "report": OK}),
    # Nothing was set up: nothing runs, nothing is torn down.
    ("setup_fails", "failed", {"create": FAIL, "work": UF, "delete": UF, "report": UF}),
])
def test_setup_teardown_runs(dag_id, run_state, tasks):
    assert _run(dag_id) == (run_state, tasks)


@pytest.mark.parametrize("dag_id", ["example_setup_teardown", "example_setup_teardown_taskflow"])
def test_airflow_examples(dag_id):
    state, tasks = _run(dag_id, "airflow_examples")
    assert state == "success" and set(tasks.values()) == {OK}, tasks
    names = {"example_setup_teardown": {"root_setup", "normal", "root_teardown", "section_1.taskgroup_setup",
                                        "section_1.normal", "section_1.taskgroup_teardown"},
             "example_setup_teardown_taskflow": {"my_first_task", "my_second_task", "my_third_task", "outer_setup",
                                                 "outer_work", "outer_teardown", "section_1.inner_setup",
                                                 "section_1.inner_work", "section_1.inner_teardown"}}
    assert set(tasks) == names[dag_id]
