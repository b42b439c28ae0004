"""``updraft dags test`` runs the DAG's success/failure callback at the run's end, as Airflow's ``dags test`` does."""

from __future__ import annotations

import textwrap

import pytest

from updraft.local.dag_test import run_dag_test

pytestmark = pytest.mark.slow


def test_dags_test_runs_the_dag_failure_callback(tmp_path):
    out = tmp_path / "called.txt"
    (tmp_path / "with_callback.py").write_text(textwrap.dedent(f"""
        import datetime
        from airflow.sdk import DAG, task

        def note(context):
            open({str(out)!r}, "a").write(context["reason"] + " " + context["ti"].task_id + "\\n")

        with DAG("with_callback", schedule=None, start_date=datetime.datetime(2024, 1, 1),
                 on_failure_callback=note, on_success_callback=note):
            @task
            def boom():
                raise ValueError("no")
            boom()
    """))
    result = run_dag_test("with_callback", dags_folder=str(tmp_path), timeout_s=60)
    assert result.run_state == "failed"
    assert out.read_text() == "task_failure boom\n"
