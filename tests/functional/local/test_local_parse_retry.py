"""A DAG file whose parse *handling* failed (Updraft's own failure, not the file's import error) is handled again
in local mode: by the queue's redelivery while the system runs, and at the next start with ``--state-dir`` (issue
34: it was never parsed again, 0 DAGs until the file changed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from local_helpers import eventually, write_dag

from tests.functional.parse_faults import failing_registration

pytestmark = pytest.mark.slow

DAG = """
    from datetime import datetime
    from airflow.sdk import dag, task

    @task
    def hello():
        return 1

    @dag(dag_id="retried", schedule=None, start_date=datetime(2024, 1, 1), catchup=False)
    def pipeline():
        hello()

    pipeline()
"""


def test_a_failed_handling_is_retried_while_the_system_runs(tmp_path: Path, start_system, monkeypatch) -> None:
    dags = tmp_path / "dags"
    dags.mkdir()
    calls = failing_registration(monkeypatch, times=2)
    system = start_system(dags)
    write_dag(dags, "retried.py", DAG)
    store = system.services.store
    eventually(lambda: store.get_dag_meta("retried"), timeout=30)
    assert calls == ["retried.py"] * 3
    # The file's record is written after its DAGs (a reader between the two writes sees the failures still counted).
    record = eventually(lambda: (r := store.get_file_record("retried.py")) and r.parse_failures == 0 and r, timeout=30)
    assert record.import_errors == [] and record.dag_ids == ["retried"]


def test_a_file_whose_handling_failed_is_parsed_again_at_the_next_start(tmp_path: Path, start_system,
                                                                         monkeypatch) -> None:
    dags = tmp_path / "dags"
    dags.mkdir()
    state = tmp_path / "state"
    write_dag(dags, "retried.py", DAG)
    with monkeypatch.context() as patch:
        failing_registration(patch, times=None)
        system = start_system(dags, state_dir=str(state))
        store = system.services.store
        failed = eventually(lambda: (r := store.get_file_record("retried.py")) and r.parse_failures >= 1 and r)
        assert store.get_dag_meta("retried") is None and failed.dag_ids == []
        system.stop()
    system = start_system(dags, state_dir=str(state))  # the cause is gone (a fixed table, a restarted parser)
    store = system.services.store
    eventually(lambda: store.get_dag_meta("retried"), timeout=30)
    # The file's record is written after its DAGs: waited for, as above.
    eventually(lambda: (r := store.get_file_record("retried.py")) and r.parse_failures == 0 and r, timeout=30)
    assert store.list_import_errors() == []
