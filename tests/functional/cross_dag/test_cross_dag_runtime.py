"""TriggerDagRunOperator and ExternalTaskSensor through the scheduler and the worker's runtime, on moto.

The DAGs are in ``dags/cross_dag.py``. Runs that wait for one another are driven by ``drive``: tries run in a
pool of worker threads (the worker Lambda's ``handle_dispatch``), so a controller's poke loop sees its target run
progress, as with separate Lambdas. Expected outcomes follow Airflow
3.3's standard provider and task runner (``_handle_trigger_dag_run``).
"""

from __future__ import annotations

import concurrent.futures
import datetime as dt
import re
import time
from pathlib import Path

import pytest
from moto import mock_aws

from airflow.exceptions import AirflowException
from airflow.providers.standard.exceptions import ExternalDagFailedError
from airflow.providers.standard.operators.trigger_dagrun import TriggerDagRunOperator
from airflow.providers.standard.sensors.external_task import ExternalTaskSensor
from airflow.sdk.exceptions import TaskDeferred
from tests.functional.runtime.rt_harness import RuntimeEnv
from updraft.local.embedded_aws import serialized_moto
from updraft.model.records import TIKey
from updraft.model.states import FINISHED_RUN_STATES
from updraft.runtime.cross_dag import CrossDag, poll_trigger
from updraft.runtime.worker import handle_dispatch
from updraft.scheduling.commands.dag_registration import set_paused

DAGS = Path(__file__).parent / "dags"
DAY = dt.datetime(2024, 3, 5, tzinfo=dt.UTC)


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    with mock_aws(), serialized_moto():  # one request at a time, as real DynamoDB's items are atomic
        env = RuntimeEnv(tmp_path_factory.mktemp("cross_dag"))
        # After the wall clock: an operator's default logical date is the real time, and a run whose logical
        # date is in the (test clock's) future would not start.
        env.clock.now = dt.datetime.now(dt.UTC) + dt.timedelta(days=1)
        env.add_folder(DAGS)
        set_paused(env.store, "paused_target", True)
        yield env


def drive(env: RuntimeEnv, *runs: tuple[str, str], timeout_s: float = 30.0) -> None:
    """Run tries on worker threads until every named run has finished.

    As on AWS, a worker hands a run to the scheduler when it needs looking at (``hand_off``: the run of a task
    that ended, and a run a task triggered), here by scheduling it at once; a full pass runs every few seconds
    as the tick would. The test clock moves with the wall clock meanwhile: a try's ``timezone.utcnow()`` starts at
    the clock's time and then runs in real time, so a run an operator triggers "now" must not be in the future of
    a frozen scheduler clock.
    """
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=4)
    errors: list[BaseException] = []

    def hand_off(dag_id: str, run_id: str) -> bool:
        env.scheduler.schedule_run(dag_id, run_id)
        return True

    def work(item):
        try:
            handle_dispatch(item, store=env.store, loader=env.loader, scheduler=env.scheduler, now_fn=env.clock,
                            log_sink=env.logs, hand_off=hand_off)
        except BaseException as exc:
            errors.append(exc)

    for dag_id, run_id in runs:
        env.scheduler.schedule_run(dag_id, run_id)
    deadline = time.monotonic() + timeout_s
    last_pass = started = time.monotonic()
    base = env.clock.now
    while not errors:
        env.clock.now = base + dt.timedelta(seconds=time.monotonic() - started + 1)
        for item in env.executor.take():
            pool.submit(work, item)
        if all(env.store.get_run(d, r).state in FINISHED_RUN_STATES for d, r in runs):
            break
        if time.monotonic() > deadline:
            pool.shutdown(wait=False, cancel_futures=True)  # a try still polling must not hang the suite
            raise AssertionError({r: env.states(d, r) for d, r in runs})
        if time.monotonic() - last_pass > 3:
            env.scheduler.run_pass()
            last_pass = time.monotonic()
        time.sleep(0.05)
    pool.shutdown(wait=True)
    if errors:
        raise errors[0]


def start(env: RuntimeEnv, dag_id: str, **kwargs) -> tuple[str, str]:
    return dag_id, env.trigger(dag_id, **kwargs).run_id


def target_runs(env: RuntimeEnv) -> dict[str, object]:
    return {run.run_id: run for run in env.store.list_runs("target")}


def ti(env, dag_id, run_id, task_id):
    return env.store.get_ti(TIKey(dag_id, run_id, task_id, -1))


@pytest.mark.slow
def test_trigger_with_rendered_conf_logical_date_and_run_id(env):
    ctl = start(env, "ctl_basic", logical_date=DAY)
    drive(env, ctl)
    assert env.states(*ctl) == {"trigger": "success"}
    run = env.store.get_run("target", "from_ctl_20240305")
    assert run is not None
    assert run.run_type == "operator_triggered"
    assert run.logical_date == dt.datetime(2024, 2, 1, tzinfo=dt.UTC)
    assert run.conf == {"day": "2024-03-05"}
    assert run.note == "started by ctl_basic"
    assert env.xcom(*ctl, "trigger", key="trigger_run_id") == "from_ctl_20240305"
    drive(env, ("target", run.run_id))
    assert env.xcom("target", run.run_id, "report") == {
        "conf": {"day": "2024-03-05"}, "logical_date": "2024-02-01T00:00:00+00:00", "run_type": "operator_triggered"}


@pytest.mark.slow
def test_wait_for_completion_polls_the_run_until_an_allowed_or_failed_state(env):
    ctl = start(env, "ctl_wait", logical_date=DAY)
    drive(env, ctl)
    # wait_flipped: allowed_states=["failed"], failed_states=["success"] turn the outcome around.
    assert env.states(*ctl) == {"wait_ok": "success", "wait_fail": "failed", "wait_flipped": "success"}
    targets = {task: env.store.get_run("target", f"{task}_2024-03-05").state.value for task in env.states(*ctl)}
    assert targets == {"wait_ok": "success", "wait_fail": "failed", "wait_flipped": "failed"}
    # An ordinary failure, naming the state (the task's retries would apply).
    assert ti(env, *ctl, "wait_fail").note == "AirflowException: target failed with failed state failed"


def test_default_run_id_is_airflows_manual_one_and_a_failed_nudge_changes_nothing(env):
    operator = TriggerDagRunOperator(task_id="t", trigger_dag_id="target", logical_date=DAY + dt.timedelta(days=1))
    context = {"ti": _TaskInstance(env)}

    def unreachable_scheduler(dag_id: str, run_id: str) -> bool:
        raise ConnectionError("scheduler function unreachable")

    context["ti"].cross_dag.nudge = unreachable_scheduler
    operator.execute(context)
    run_id = context["ti"].xcoms["trigger_run_id"]
    assert run_id == "manual__2024-03-06T00:00:00+00:00"
    assert env.store.get_run("target", run_id).run_type == "operator_triggered"


@pytest.mark.slow
def test_an_existing_run_fails_without_retry_skips_or_is_reset_and_waited_for(env):
    env.trigger("target", run_id="fixed", logical_date=DAY)
    ctl = start(env, "ctl_existing", logical_date=DAY)
    drive(env, ctl, ("target", "fixed"))
    assert env.states(*ctl) == {"fails": "failed", "skips": "skipped"}
    assert ti(env, *ctl, "fails").try_number == 1  # retries=2, yet failed at once as Airflow's task runner does
    assert "already exists" in ti(env, *ctl, "fails").note
    assert env.store.get_run("target", "fixed").state.value == "success"
    assert ti(env, "target", "fixed", "report").try_number == 1
    # reset_dag_run: the finished run is cleared, runs again and is waited for.
    ctl = start(env, "ctl_reset", logical_date=DAY)
    drive(env, ctl)
    assert env.states(*ctl) == {"reset": "success"}
    assert ti(env, "target", "fixed", "report").try_number == 2  # cleared and run again
    assert env.store.get_run("target", "fixed").state.value == "success"
    assert env.store.get_run("target", "fixed").run_type == "manual"  # reset, not recreated


def test_fail_when_dag_is_paused(env):
    ctl = start(env, "ctl_paused", logical_date=DAY)
    drive(env, ctl)
    assert env.states(*ctl) == {"refused": "failed", "allowed": "success"}
    assert ti(env, *ctl, "refused").note == "DagIsPaused: Dag paused_target is paused"
    assert env.store.get_run("paused_target", "while_paused").state.value == "queued"  # paused: not started


@pytest.mark.slow
def test_external_task_sensor_outcomes(env):
    upstream = start(env, "upstream", logical_date=DAY)
    drive(env, upstream)
    sensors = start(env, "sensors", logical_date=DAY)
    drive(env, sensors)
    assert env.states(*sensors) == {
        "on_task": "success", "on_tasks": "success", "on_group": "success", "by_date_fn": "success",
        "on_failed_task": "failed", "on_failed_soft": "skipped", "skip_on_failed": "skipped",
        "on_dag_failed": "success",  # upstream's run failed (broken), which is what this sensor waits for
        "day_before": "failed", "missing_task": "failed", "missing_dag": "failed",
    }
    notes = {task: ti(env, *sensors, task).note for task in env.states(*sensors)}
    assert notes["on_failed_task"] == ("ExternalTaskFailedError: Some of the external tasks ['broken'] in DAG "
                                       "upstream failed.")
    assert notes["missing_task"] == ("ExternalTaskNotFoundError: The external task nope in DAG upstream does not "
                                     "exist.")
    assert notes["missing_dag"] == "ExternalDagNotFoundError: The external DAG no_such_dag does not exist."
    # A sensor that times out fails without using its retries (AirflowSensorTimeout), as in Airflow.
    assert notes["day_before"].startswith("AirflowSensorTimeout: Sensor has timed out")
    assert ti(env, *sensors, "day_before").try_number == 1


def test_sensor_waits_while_the_other_dag_runs(env):
    later = DAY + dt.timedelta(days=7)
    waiting = start(env, "waits_for_upstream", logical_date=later)
    env.scheduler.schedule_run(*waiting)  # the sensor is dispatched before the run it waits for exists
    upstream = start(env, "upstream", logical_date=later)
    drive(env, waiting, upstream)
    assert env.states(*waiting) == {"wait": "success"}
    produce = ti(env, *upstream, "produce")
    assert ti(env, *waiting, "wait").end_date >= produce.end_date


class _TaskInstance:
    """What the operators use of the try's ``ti``: the cross-DAG reader and XCom push."""

    def __init__(self, env: RuntimeEnv) -> None:
        self.cross_dag = CrossDag(env.store, now_fn=env.clock)
        self.xcoms: dict[str, object] = {}

    def xcom_push(self, key: str, value: object) -> None:
        self.xcoms[key] = value


def test_deferrable_trigger_hands_the_wait_to_a_dag_state_trigger(env):
    for conf, outcome in [({}, None), ({"fail": True}, "target failed with failed states ['failed'] for run_ids")]:
        run_id = f"deferred_{bool(conf)}"
        operator = TriggerDagRunOperator(task_id="t", trigger_dag_id="target", trigger_run_id=run_id, conf=conf,
                                         logical_date=DAY, wait_for_completion=True, deferrable=True,
                                         poke_interval=7)
        context = {"ti": _TaskInstance(env)}
        with pytest.raises(TaskDeferred) as deferred:
            operator.execute(context)
        assert context["ti"].xcoms == {"trigger_run_id": run_id}
        trigger = deferred.value.trigger
        assert deferred.value.method_name == "execute_complete"
        assert trigger.serialize() == ("airflow.providers.standard.triggers.external_task.DagStateTrigger", {
            "dag_id": "target", "states": ["success", "failed"], "poll_interval": 7, "run_ids": [run_id],
            "execution_dates": None})
        assert trigger.poll_once(CrossDag(env.store)) is None  # queued: not in a final state yet
        drive(env, ("target", run_id))
        event = trigger.poll_once(CrossDag(env.store))
        assert event.payload[1][run_id] == ("failed" if conf else "success")
        if outcome is None:
            operator.execute_complete(context, event.payload)
        else:
            with pytest.raises(AirflowException, match=re.escape(outcome)):
                operator.execute_complete(context, event.payload)


def test_deferrable_sensor_hands_the_wait_to_a_workflow_trigger(env):
    when = DAY + dt.timedelta(days=14)
    context = {"ti": _TaskInstance(env), "logical_date": when}
    waits = ExternalTaskSensor(task_id="s", external_dag_id="upstream", external_task_id="produce",
                               deferrable=True, poke_interval=3, timeout=60)
    fails = ExternalTaskSensor(task_id="f", external_dag_id="upstream", external_task_id="broken",
                               failed_states=["failed"], deferrable=True, poke_interval=3, timeout=60)
    triggers = []
    for sensor in (waits, fails):
        with pytest.raises(TaskDeferred) as deferred:
            sensor.execute(context)
        assert deferred.value.timeout == dt.timedelta(seconds=60)
        triggers.append(deferred.value.trigger)
    assert triggers[0].serialize()[1]["logical_dates"] == [when]
    assert [poll_trigger(t, env.store) for t in triggers] == [None, None]  # no upstream run at that date yet
    drive(env, start(env, "upstream", logical_date=when))
    events = [poll_trigger(t, env.store) for t in triggers]
    assert [e.payload for e in events] == [{"status": "success"}, {"status": "failed"}]
    waits.execute_complete(context, events[0].payload)
    with pytest.raises(ExternalDagFailedError, match="External job has failed"):
        fails.execute_complete(context, events[1].payload)


def test_airflows_cross_dag_examples_load():
    """The standard provider's own example files (``airflow_examples/``, unchanged from the 1.21 wheel, Apache
    License 2.0) load, deferrable sensors and markers included."""
    from updraft.runtime.loader import LocalDagLoader

    folder = Path(__file__).parent / "airflow_examples"
    loader = LocalDagLoader(folder, None)
    assert {path.name: sorted(loader.load_file(path.name)) for path in sorted(folder.glob("*.py"))} == {
        "example_external_task_child_deferrable.py": ["child_dag"],
        "example_external_task_marker_dag.py": [
            "example_external_task_marker_child", "example_external_task_marker_parent"],
        "example_external_task_parent_deferrable.py": ["example_external_task"],
        "example_trigger_controller_dag.py": ["example_trigger_controller_dag"],
    }
