"""Local mode claims no more tries than its workers can run (issue 20): Airflow's LocalExecutor has exactly
``parallelism`` processes, so nothing waits in a queue holding pool, max_active_tasks and parallelism slots."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from local_helpers import eventually, now, write_dag

from updraft.limits import size
from updraft.model.limits import PARALLELISM_LIMIT
from updraft.scheduling.commands.dag_registration import set_paused
from updraft.scheduling.commands.triggering import trigger_dag
from updraft.scheduling.holding import limits_table

pytestmark = pytest.mark.slow

POOLED = """
    import time
    from datetime import datetime
    from airflow.sdk import dag, task

    @task(pool="ten_slots")
    def hold(i):
        time.sleep(0.3)
        return i

    @dag(dag_id="pooled", schedule=None, start_date=datetime(2024, 1, 1), catchup=False)
    def pipeline():
        hold.expand(i=list(range(12)))

    pipeline()
"""


def test_a_pool_of_ten_never_has_more_holders_than_the_four_workers(tmp_path: Path, start_system) -> None:
    dags = tmp_path / "dags"
    dags.mkdir()
    write_dag(dags, "pooled.py", POOLED)
    system = start_system(dags, workers=4)
    store = system.services.store
    store.set_pool("ten_slots", 10, "ten slots, four workers")
    eventually(lambda: store.get_dag_meta("pooled"))
    set_paused(store, "pooled", False)
    peak, done = [0], threading.Event()
    run_id: list[str] = []

    def watch() -> None:
        # Slots held by tries: queued (claimed, waiting for a worker) or running. A claim refused by the full
        # parallelism limit takes and gives back a pool slot within one write pair; that is no try holding it.
        while not done.is_set():
            if run_id:
                holding = [ti for ti in store.get_run_tis("pooled", run_id[0])
                           if ti.state is not None and ti.state.value in ("queued", "running")]
                assert all(ti.pool == "ten_slots" for ti in holding)
                peak[0] = max(peak[0], len(holding))
            done.wait(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        run = trigger_dag(store, "pooled", now=now())
        run_id.append(run.run_id)
        assert system.services.nudge_scheduler("pooled", run.run_id)
        finished = eventually(lambda: (r := store.get_run("pooled", run.run_id)) and r.state.value in
                              ("success", "failed") and r, timeout=120)
    finally:
        done.set()
        watcher.join()
    assert finished.state.value == "success"
    assert peak[0] == 4  # filled to the workers, never beyond


def test_parallelism_follows_the_workers_across_restarts(tmp_path: Path, start_system) -> None:
    """The limit's counters outlive a stop with --state-dir; a restart with other workers resizes them."""
    dags, state = tmp_path / "dags", tmp_path / "state"
    dags.mkdir()
    system = start_system(dags, workers=3, state_dir=str(state))
    store = system.services.store
    eventually(lambda: size(limits_table(store), PARALLELISM_LIMIT) == 3)
    system.stop()
    system = start_system(dags, workers=2, state_dir=str(state))
    store = system.services.store
    eventually(lambda: size(limits_table(store), PARALLELISM_LIMIT) == 2)
    system.stop()
    system = start_system(dags, workers=2, parallelism=8, state_dir=str(state))  # capped to the workers
    store = system.services.store
    eventually(lambda: size(limits_table(store), PARALLELISM_LIMIT) == 2)
