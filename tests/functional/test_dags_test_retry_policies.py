"""`updraft dags test` honours a task's ``retry_policy`` as Airflow 3.3's worker does (issue 17): FAIL ends the
task on its first try whatever retries are left, RETRY retries after the policy's delay (not the task's), and
RETRY cannot retry beyond ``retries``."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from updraft.local.dag_test import run_dag_test

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fast_dags_test_ticks")]


def test_retry_policies():
    result = run_dag_test("retry_policies", dags_folder=str(Path(__file__).parent / "dags_test_retry_policies"),
                          logical_date=dt.datetime(2024, 3, 5, tzinfo=dt.UTC))
    tasks = {label: (ti["state"], ti["try_number"]) for label, ti in result.tasks.items()}
    assert (result.run_state, tasks) == ("failed", {
        "forbidden": ("failed", 1), "flaky": ("success", 3), "no_retries_left": ("failed", 1)})
