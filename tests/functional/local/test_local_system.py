"""``updraft local`` end to end: files synced and parsed, runs triggered and scheduled, Lambda and Fargate tasks,
lost tries released as Airflow would, state kept across a restart."""

from __future__ import annotations

import json
import os
import shutil
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from local_helpers import eventually, now, write_dag

from updraft.local.endpoint import LocalEndpoint, NotRunning
from updraft.model.records import TIKey
from updraft.scheduling.commands.dag_registration import set_paused
from updraft.scheduling.commands.triggering import trigger_dag

pytestmark = pytest.mark.slow

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"

CHAIN = """
    from datetime import datetime
    from airflow.sdk import dag, task

    @task
    def double(x):
        return x * 2

    @task
    def add(x, y):
        return x + y

    @task(executor="fargate")
    def on_fargate(x):
        return x + 1

    @dag(dag_id="{dag_id}", schedule=None, start_date=datetime(2024, 1, 1), catchup=False)
    def pipeline():
        # A chain (the worker schedules the next task itself) and a fan-in (handed to the scheduler).
        on_fargate(add(double(1), double(double(1))))

    pipeline()
"""

SLOW = """
    import time
    from datetime import datetime, timedelta
    from airflow.sdk import dag, task

    @task(retries={retries}, retry_delay=timedelta(seconds=0))
    def slow():
        time.sleep(60)

    @dag(dag_id="slow", schedule=None, start_date=datetime(2024, 1, 1), catchup=False)
    def pipeline():
        slow()

    pipeline()
"""


def _trigger(system, dag_id: str, **kwargs):
    store = system.services.store
    set_paused(store, dag_id, False)  # a run of a paused DAG waits for the unpause, as in Airflow
    run = trigger_dag(store, dag_id, now=now(), **kwargs)
    assert system.services.nudge_scheduler(dag_id, run.run_id)
    return run


def _finished(system, dag_id: str, run_id: str):
    run = system.services.store.get_run(dag_id, run_id)
    return run if run is not None and run.state.value in ("success", "failed") else None


def _states(system, dag_id: str, run_id: str) -> dict[str, tuple[str | None, int]]:
    return {ti.key.task_id: (ti.state and ti.state.value, ti.try_number)
            for ti in system.services.store.get_run_tis(dag_id, run_id)}


def _task_server_of(parent: int) -> bool:
    """Whether ``parent`` has a child running ``python -m updraft.runtime.task_process``."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:  # ended meanwhile
            continue
        if int(stat.rpartition(")")[2].split()[1]) == parent and b"updraft.runtime.task_process" in command:
            return True
    return False


def test_dag_files_are_synced_parsed_changed_and_removed(tmp_path: Path, start_system) -> None:
    dags = tmp_path / "dags"
    dags.mkdir()
    write_dag(dags, "first.py", CHAIN.format(dag_id="first"))
    shutil.copy(EXAMPLES / "dags" / "example_workday_timetable.py", dags)  # a timetable from a plugin
    system = start_system(dags, plugins_folder=str(EXAMPLES / "plugins"))
    # No try has run, and each worker process already runs the task server its tries fork from, as a warm
    # Lambda container would: a worker's first try does not pay its start (~0.6 s).
    workers = [worker.process.pid for worker in system.pool._idle]
    assert len(workers) == system.pool.size
    eventually(lambda: all(_task_server_of(pid) for pid in workers), timeout=60)
    store = system.services.store
    eventually(lambda: store.get_dag_meta("first"))
    workday = eventually(lambda: store.get_dag_meta("example_workday_timetable"))
    assert workday.next_dagrun_logical_date is not None  # the parser's process decoded the plugin's timetable too

    write_dag(dags, "second.py", CHAIN.format(dag_id="second"))
    eventually(lambda: store.get_dag_meta("second"))
    (dags / "second.py").write_text("from airflow.sdk import DAG\nimport nonexistent_module_xyz\n")
    errors = eventually(lambda: [e for e in store.list_import_errors() if "second.py" in json.dumps(e)])
    assert "nonexistent_module_xyz" in json.dumps(errors)
    assert not [e for e in store.list_import_errors() if "workday" in json.dumps(e)]
    (dags / "first.py").unlink()
    eventually(lambda: not store.get_dag_meta("first").is_active)
    assert system.sync.sync_once().uploaded == []  # nothing changed since: nothing is uploaded again


def test_a_triggered_run_runs_lambda_and_fargate_tasks_to_success(tmp_path: Path, start_system,
                                                                  updraft_home: Path) -> None:
    dags = tmp_path / "dags"
    dags.mkdir()
    write_dag(dags, "chain.py", CHAIN.format(dag_id="chain"))
    system = start_system(dags)
    assert LocalEndpoint.read().endpoint_url == system.server.url  # the CLI finds it
    with urllib.request.urlopen(f"{LocalEndpoint.read().api_url}/api/v2/monitor/health", timeout=30) as response:
        health = json.loads(response.read())
    assert response.status == 200 and health["metadatabase"] == {"status": "healthy"}  # the api handler answers
    try:
        urllib.request.urlopen(f"{system.api.url}/api/v2/nothing-here", timeout=30)
    except urllib.error.HTTPError as exc:
        assert exc.code == 404
    else:
        raise AssertionError("an unknown route answered")
    assert eventually(lambda: system.services.store.get_dag_meta("chain")).is_paused  # as Airflow creates DAGs
    run = _trigger(system, "chain")
    finished = eventually(lambda: _finished(system, "chain", run.run_id), timeout=60)
    assert finished.state.value == "success"
    states = _states(system, "chain", run.run_id)
    assert states == {"double": ("success", 1), "double__1": ("success", 1), "double__2": ("success", 1),
                      "add": ("success", 1), "on_fargate": ("success", 1)}
    store = system.services.store
    from updraft.model.records import TIKey

    assert store.get_xcom(TIKey("chain", run.run_id, "on_fargate", -1), "return_value") == 7
    log = system.services.log_sink.read(TIKey("chain", run.run_id, "double", -1), 1)
    assert log is not None
    system.stop()
    try:
        LocalEndpoint.read()
    except NotRunning:
        pass
    else:
        raise AssertionError("the endpoint file outlived the system")


NICENESS = """
    import os
    from datetime import datetime
    from airflow.sdk import dag, task

    @task
    def on_lambda():
        return os.nice(0)

    @task(executor="fargate")
    def on_fargate():
        return os.nice(0)

    @dag(dag_id="niceness", schedule=None, start_date=datetime(2024, 1, 1), catchup=False)
    def pipeline():
        on_lambda() >> on_fargate()

    pipeline()
"""


def test_tries_on_lambda_and_fargate_run_the_configured_niceness_below_local_mode(tmp_path: Path,
                                                                                  start_system) -> None:
    dags = tmp_path / "dags"
    dags.mkdir()
    write_dag(dags, "niceness.py", NICENESS)
    system = start_system(dags, compute_niceness=3)
    eventually(lambda: system.services.store.get_dag_meta("niceness"))
    run = _trigger(system, "niceness")
    assert eventually(lambda: _finished(system, "niceness", run.run_id), timeout=60).state.value == "success"
    expected = min(19, os.nice(0) + 3)
    store = system.services.store
    assert {task: store.get_xcom(TIKey("niceness", run.run_id, task, -1), "return_value")
            for task in ("on_lambda", "on_fargate")} == {"on_lambda": expected, "on_fargate": expected}
    assert {os.getpriority(os.PRIO_PROCESS, worker.process.pid) for worker in system.pool._idle} == {expected}


def test_a_new_dag_unpaused_at_first_sight_gets_its_runs_from_the_tick(tmp_path: Path, start_system) -> None:
    dags = tmp_path / "dags"
    dags.mkdir()
    write_dag(dags, "hourly.py", """
        from datetime import datetime, timedelta
        from airflow.sdk import DAG
        from airflow.providers.standard.operators.empty import EmptyOperator

        with DAG("hourly", schedule=timedelta(hours=1), start_date=datetime(2024, 1, 1), catchup=False):
            EmptyOperator(task_id="noop")
    """)
    system = start_system(dags, unpause_new_dags=True)  # `updraft local --unpause`
    store = system.services.store
    [run] = eventually(lambda: [r for r in store.list_runs("hourly") if r.state.value == "success"], timeout=30)
    assert run.run_type == "scheduled"


def test_a_task_that_kills_its_worker_is_retried_and_the_pool_recovers(tmp_path: Path, start_system) -> None:
    dags = tmp_path / "dags"
    dags.mkdir()
    write_dag(dags, "crash.py", """
        import os
        from datetime import datetime, timedelta
        from airflow.sdk import dag, task

        @task(retries=1, retry_delay=timedelta(seconds=0))
        def crash(ti=None):
            if ti.try_number == 1:
                os._exit(9)
            return "second try"

        @dag(dag_id="crash", schedule=None, start_date=datetime(2024, 1, 1), catchup=False)
        def pipeline():
            crash()

        pipeline()
    """)
    system = start_system(dags)
    eventually(lambda: system.services.store.get_dag_meta("crash"))
    run = _trigger(system, "crash")
    finished = eventually(lambda: _finished(system, "crash", run.run_id), timeout=60)
    assert finished.state.value == "success"
    assert _states(system, "crash", run.run_id) == {"crash": ("success", 2)}
    # The task's code runs in a child of the worker (runtime/supervisor.py): os._exit ends only that child, and
    # the worker fails the try itself, so no try is left running for the stop to report.
    assert system.orphans == {}
    log = system.services.log_sink.read(TIKey("crash", run.run_id, "crash", -1), 1)
    assert "the task's process ended without a result" in log


def test_state_survives_a_stop_and_a_running_try_is_retried_after_restart(tmp_path: Path, start_system) -> None:
    dags = tmp_path / "dags"
    dags.mkdir()
    state_dir = tmp_path / "state"
    write_dag(dags, "slow.py", SLOW.format(retries=1))
    system = start_system(dags, state_dir=str(state_dir))
    store = system.services.store
    eventually(lambda: store.get_dag_meta("slow"))
    set_paused(store, "slow", False)
    run = _trigger(system, "slow")
    eventually(lambda: _states(system, "slow", run.run_id).get("slow", (None,))[0] == "running", timeout=30)
    report = system.stop()
    assert report.orphans == {"slow.slow": "running"}
    assert report.snapshot and report.snapshot["items"] > 0

    write_dag(dags, "slow.py", SLOW.format(retries=1).replace("time.sleep(60)", "return 'done'"))
    system = start_system(dags, state_dir=str(state_dir))
    store = system.services.store
    assert store.get_run("slow", run.run_id) is not None  # the run came back with the table
    finished = eventually(lambda: _finished(system, "slow", run.run_id), timeout=60)
    # The lost try was a zombie: with a retry left, try 2 ran (the fixed file) and succeeded.
    assert finished.state.value == "success"
    assert _states(system, "slow", run.run_id) == {"slow": ("success", 2)}
    assert os.path.isdir(state_dir / "snapshot")


def test_a_fargate_task_killed_mid_try_fails_its_try_at_once_as_ecs_reports_it(tmp_path: Path, start_system) -> None:
    """Local mode reports a Fargate process that died as ECS reports a stopped task on AWS (the stack's rule sends
    it to the scheduler): the try fails at once as Airflow fails a task killed externally, its retry runs."""
    dags = tmp_path / "dags"
    dags.mkdir()
    write_dag(dags, "heavy.py", """
        import time
        from datetime import datetime, timedelta
        from airflow.sdk import dag, task

        @task(executor="fargate", retries=1, retry_delay=timedelta(seconds=3))
        def train(ti=None):
            if ti.try_number == 1:
                time.sleep(600)  # its process is killed meanwhile, as ECS stops a task out of memory
            return "trained"

        @dag(dag_id="heavy", schedule=None, start_date=datetime(2024, 1, 1), catchup=False)
        def pipeline():
            train()

        pipeline()
    """)
    system = start_system(dags)
    store = system.services.store
    eventually(lambda: store.get_dag_meta("heavy"))
    run = _trigger(system, "heavy")
    key = TIKey("heavy", run.run_id, "train", -1)
    eventually(lambda: (ti := store.get_ti(key)) and ti.state.value == "running" and system.fargate.running,
               timeout=60)
    (task,) = system.fargate.running.values()
    task.process.kill()
    lost = eventually(lambda: (ti := store.get_ti(key)) and ti.try_number == 1 and ti.state.value != "running" and ti,
                      timeout=30)
    assert lost.state.value == "up_for_retry", lost
    assert lost.note == (f"killed externally: Fargate task {task.task_arn} stopped (EssentialContainerExited: "
                         "Essential container in task exited; exit code 137), while the try was running")
    finished = eventually(lambda: _finished(system, "heavy", run.run_id), timeout=60)
    assert finished.state.value == "success" and _states(system, "heavy", run.run_id) == {"train": ("success", 2)}
    assert system.orphans == {}  # failed by the scheduler, not released as an orphan
