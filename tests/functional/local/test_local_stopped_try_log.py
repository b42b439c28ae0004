"""A try stopped by local mode keeps the log it had written (issue 18, found by a new user).

A try's log is written when the try ends; stopping local mode killed the worker process first, so everything
the try had printed was lost.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from local_helpers import eventually, write_dag

from updraft.resources import LOGS_PREFIX
from updraft.scheduling.commands.dag_registration import set_paused
from updraft.scheduling.commands.triggering import trigger_dag

pytestmark = pytest.mark.slow

TALKER = """
    import time
    from datetime import datetime
    from airflow.sdk import dag, task

    @task
    def talk():
        print("halfway through the work", flush=True)
        open({marker!r}, "w").close()
        time.sleep(60)

    @dag(dag_id="talker", schedule=None, start_date=datetime(2024, 1, 1), catchup=False)
    def pipeline():
        talk()

    pipeline()
"""


def test_a_try_stopped_by_a_stop_keeps_its_log(tmp_path: Path, start_system) -> None:
    dags = tmp_path / "dags"
    dags.mkdir()
    state_dir = tmp_path / "state"
    marker = tmp_path / "printed"
    write_dag(dags, "talker.py", TALKER.format(marker=str(marker)))
    system = start_system(dags, state_dir=str(state_dir))
    store = system.services.store
    eventually(lambda: store.get_dag_meta("talker"))
    set_paused(store, "talker", False)
    run = trigger_dag(store, "talker", now=dt.datetime.now(dt.UTC), run_id="stopped")
    system.services.nudge_scheduler("talker", run.run_id)

    def running() -> bool:
        tis = store.get_run_tis("talker", "stopped")
        return bool(tis) and tis[0].state is not None and tis[0].state.value == "running"

    eventually(running, timeout=30)
    eventually(marker.exists, timeout=30)
    report = system.stop()
    assert report.orphans == {"talker.talk": "running"}

    log = state_dir / "snapshot" / "objects" / f"{LOGS_PREFIX}talker/stopped/talk/-1/1.log"
    text = log.read_text()
    assert "halfway through the work" in text
    assert "was stopped (SIGTERM) before the try ended" in text
