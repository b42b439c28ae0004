"""`updraft dags test` skips a reschedule-mode sensor's waits (saying so) instead of sleeping through them, and the
sensors keep Airflow's outcomes: try 1 throughout, timeouts counted from the first poke, soft_fail skips."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from updraft.local.dag_test import run_dag_test

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fast_dags_test_ticks")]

HERE = Path(__file__).parent


def test_reschedule_sensors_run_with_their_waits_skipped(tmp_path, monkeypatch):
    (tmp_path / "in" / "deep").mkdir(parents=True)
    (tmp_path / "in" / "deep" / "data.csv").write_text("x")
    monkeypatch.setenv("AIRFLOW_CONN_FS_DEFAULT", json.dumps({"conn_type": "fs", "extra": {"path": str(tmp_path)}}))
    skips: list[str] = []
    result = run_dag_test("reschedule_sensors", dags_folder=str(HERE / "dags_test_reschedule"),
                          on_sensor_skip=skips.append, workers=2)
    table = {label: (ti["state"], ti["try_number"]) for label, ti in result.tasks.items()}
    assert table == {
        "third_poke": ("success", 1), "after": ("success", 1), "found": ("success", 1),
        "missing": ("skipped", 1), "bash_times_out": ("failed", 1), "bash_fails": ("failed", 1),
        "decorated": ("success", 1),
    }
    assert result.run_state == "failed"
    # Pokes at 0, 600 and 1200 s (each sensor from its own first poke): about twenty minutes skipped in all, and
    # the wall clock never waited for them.
    assert skips and all(s.startswith("dags test: skipped ") and "(mode='reschedule')" in s for s in skips)
    total = float(skips[-1].rsplit("; ", 1)[1].split(" s skipped in all")[0])
    assert 1100 < total < 1300 and result.wall_s < 60
