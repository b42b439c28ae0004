"""A DAG file that hangs at import delays no file uploaded after it (issue 18, found by a new user).

Local mode handed the bucket's notifications to the parser one at a time, so every file uploaded after a hung
one waited for the full parse timeout.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from local_helpers import eventually, write_dag

pytestmark = pytest.mark.slow

HUNG = """
    import time
    from airflow.sdk import DAG
    time.sleep(8)
    with DAG(dag_id="hung", schedule=None):
        pass
"""
QUICK = """
    from airflow.sdk import DAG
    with DAG(dag_id="quick", schedule=None):
        pass
"""


def test_a_file_uploaded_after_a_hung_one_is_parsed_at_once(tmp_path: Path, start_system) -> None:
    dags = tmp_path / "dags"
    dags.mkdir()
    system = start_system(dags)
    store = system.services.store
    write_dag(dags, "hung.py", HUNG)
    time.sleep(1.0)  # the hung file's parse is under way
    write_dag(dags, "quick.py", QUICK)
    # Order, not a time limit (a loaded machine parses slowly): had the quick file waited behind the hung one, the
    # hung one (8 s at import) would be stored first.
    eventually(lambda: store.get_dag_meta("quick"), timeout=60.0, every=0.05)
    assert store.get_dag_meta("hung") is None  # still parsing
