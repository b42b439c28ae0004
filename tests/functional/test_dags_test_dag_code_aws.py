"""`updraft dags test` serves its embedded AWS to DAG code, with a DAG-code role's credentials, as local mode
does: a task's boto3 calls and a deferrable S3 wait's looks reach the test's AWS (before, DAG code got no
credentials at all and every boto3 call in a task failed with "Unable to locate credentials")."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from updraft.local.dag_test import run_dag_test

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fast_dags_test_ticks")]

HERE = Path(__file__).parent


def test_tasks_and_deferrable_s3_waits_reach_the_embedded_aws_as_the_dag_code_role(tmp_path):
    result = run_dag_test("aws_user", dags_folder=str(HERE / "dags_test_dag_code_aws"), log_folder=str(tmp_path),
                          logical_date=dt.datetime(2024, 3, 5, tzinfo=dt.UTC))
    table = {label: (ti["state"], ti["try_number"]) for label, ti in result.tasks.items()}
    assert table == {"make_bucket": ("success", 1), "who_am_i": ("success", 1), "write_later": ("success", 1),
                     "ready": ("success", 1)}
    assert result.run_state == "success"
