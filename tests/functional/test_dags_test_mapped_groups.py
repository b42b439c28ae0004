"""`updraft dags test` on mapped task groups, with the states and try numbers Airflow 3.3 gives (issue 17): in a
group of 3 where index 1 fails, only index 1 of the tasks after it is upstream_failed (per-index trigger rules),
an all_done task in the group runs at every index, and a task downstream of the group sees every index. Also
expand over an upstream's XCom, expand_kwargs with partial, and Airflow's own ``example_dynamic_task_mapping*.py``
(``airflow_examples/``, unchanged from the apache-airflow-core 3.3.2 wheel; the file of the first could not be
imported before mapped task groups existed). The DAGs' tasks assert the values
they receive, so a wrong index or XCom fails the run."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from updraft.local.dag_test import run_dag_test

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fast_dags_test_ticks")]

HERE = Path(__file__).parent
OK, FAIL, UF = ("success", 1), ("failed", 1), ("upstream_failed", 0)


def _run(dag_id: str, folder: str = "dags_test_mapped_groups"):
    result = run_dag_test(dag_id, dags_folder=str(HERE / folder), logical_date=dt.datetime(2024, 3, 5, tzinfo=dt.UTC))
    return result.run_state, {label: (ti["state"], ti["try_number"]) for label, ti in result.tasks.items()}


def _indexes(task: str, *states: tuple[str, int]) -> dict[str, tuple[str, int]]:
    return {f"{task}[{i}]": state for i, state in enumerate(states)}


def test_a_group_of_three_with_a_failing_index():
    assert _run("group_of_three") == ("failed", {
        **_indexes("each.check", OK, FAIL, OK),
        **_indexes("each.after", OK, UF, OK), **_indexes("each.tidy", OK, OK, OK),
        "summary": UF,  # all_success over every index
        "report": OK,  # all_done; it checks it got the two results that exist
    })


@pytest.mark.parametrize(("dag_id", "tasks"), [
    ("group_over_xcom", {"numbers": OK, **_indexes("double.twice", OK, OK), "total": OK}),
    ("group_expand_kwargs", {**_indexes("adding.add", OK, OK), "total": OK}),
])
def test_expand_over_an_xcom_and_expand_kwargs(dag_id, tasks):
    assert _run(dag_id) == ("success", tasks)


@pytest.mark.parametrize(("dag_id", "tasks"), [
    ("example_task_group_mapping", {**_indexes("op.add_1", OK, OK, OK), **_indexes("op.mul_2", OK, OK, OK)}),
    ("example_dynamic_task_mapping", {**_indexes("add_one", OK, OK, OK), "sum_it": OK}),
    ("example_dynamic_task_mapping_with_no_taskflow_operators", {**_indexes("add_one", OK, OK, OK),
                                                                 "sum_it": OK}),
])
def test_airflow_examples(dag_id, tasks):
    assert _run(dag_id, "airflow_examples") == ("success", tasks)
