"""DAG-level on_success_callback / on_failure_callback: sent once by the scheduler that ends the run, run on a
worker with Airflow's context, logged under the run's callback key; a failing callback changes nothing."""

from __future__ import annotations

import dataclasses
import json
import textwrap
from types import SimpleNamespace

import pytest
from moto import mock_aws

from tests.functional.runtime.rt_harness import HEADER, RuntimeEnv
from updraft.executors.callback_requests import CALLBACK_LOG_TASK_ID, DagCallbackRequest
from updraft.model.records import TIKey
from updraft.runtime.dag_callbacks import run_dag_callbacks

DAGS = """
import json, os
OUT = os.environ["CALLBACK_OUT"]

def record(name):
    def callback(context):
        ti = context.get("ti")
        with open(OUT, "a") as f:
            f.write(json.dumps({"cb": name, "reason": context["reason"], "run_id": context["run_id"],
                                "dag": context["dag"].dag_id, "state": context["dag_run"].state,
                                "ti": ti and [ti.task_id, ti.try_number], "ds": context.get("ds")}) + "\\n")
    return callback

def broken(context):
    raise RuntimeError("callback bug")

with DAG("cb_ok", schedule=None, start_date=START, on_success_callback=[broken, record("success")],
         on_failure_callback=record("failure")):
    PythonOperator(task_id="b", python_callable=lambda: 1)

with DAG("cb_fail", schedule=None, start_date=START, on_failure_callback=record("failure")):
    PythonOperator(task_id="good", python_callable=lambda: 1) >> PythonOperator(
        task_id="bad", python_callable=lambda: 1 / 0)

with DAG("cb_timeout", schedule=None, start_date=START, dagrun_timeout=datetime.timedelta(seconds=5),
         on_failure_callback=record("failure")):
    PythonOperator(task_id="slow", python_callable=lambda: 1)

with DAG("cb_none", schedule=None, start_date=START):
    EmptyOperator(task_id="only")

from airflow.sdk import BaseNotifier
from airflow.sdk.bases.notifier import BaseNotifier as SameNotifier
assert SameNotifier is BaseNotifier

class Notes(BaseNotifier):
    template_fields = ("message",)

    def __init__(self, message):
        super().__init__()
        self.message = message

    def notify(self, context):
        with open(OUT, "a") as f:
            f.write(json.dumps({"cb": "notifier", "reason": context.get("reason"), "run_id": context["run_id"],
                                "dag": context["dag"].dag_id, "message": self.message,
                                "merged": context["message"]}) + "\\n")

with DAG("cb_notify", schedule=None, start_date=START, user_defined_macros={"team": "data"},
         on_failure_callback=Notes("{{ run_id }} failed ({{ reason }}) for {{ team }}")):
    PythonOperator(task_id="boom", python_callable=lambda: 1 / 0,
                   on_failure_callback=Notes("task {{ ti.task_id }} try {{ ti.try_number }}"))
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    root = tmp_path_factory.mktemp("dag_callbacks")
    source = root / "source"
    source.mkdir()
    (source / "cb_dags.py").write_text(HEADER + textwrap.dedent(DAGS))
    with mock_aws(), pytest.MonkeyPatch.context() as patch:
        patch.setenv("CALLBACK_OUT", str(root / "calls.jsonl"))
        env = RuntimeEnv(root)
        env.add_folder(source)
        env.out = root / "calls.jsonl"
        yield env


def calls(env, run):
    if not env.out.exists():
        return []
    return [c for c in map(json.loads, env.out.read_text().splitlines())
            if (c["dag"], c["run_id"]) == (run.dag_id, run.run_id)]


def test_success_callbacks_run_once_after_the_run_with_the_last_task_in_context(env):
    run = env.run("cb_ok")
    assert run.state == "success"
    assert env.drain() == 0  # the callback request is not a try
    (call,) = calls(env, run)  # the broken callback was logged, the next one still ran
    assert call == {"cb": "success", "reason": "success", "run_id": run.run_id, "dag": "cb_ok", "state": "success",
                    "ti": ["b", 1], "ds": run.logical_date.strftime("%Y-%m-%d")}
    assert env.store.get_run("cb_ok", run.run_id).state == "success"  # the failing callback changed nothing
    log = env.logs.read(TIKey("cb_ok", run.run_id, CALLBACK_LOG_TASK_ID), 1)
    assert "Executing on_success dag callback" in log and "RuntimeError: callback bug" in log


def test_a_duplicate_delivery_runs_nothing(env):
    run = env.run("cb_ok", run_id="second")
    env.drain()
    request = DagCallbackRequest.for_run("cb_ok", run.run_id, request_id="dup", success=True, reason="success",
                                         ti_key=None)
    assert run_dag_callbacks(request, store=env.store, loader=env.loader, now_fn=env.clock) is True
    assert run_dag_callbacks(request, store=env.store, loader=env.loader, now_fn=env.clock) is False
    minimal = [c for c in calls(env, run) if c["ti"] is None]
    assert len(minimal) == 1 and minimal[0]["reason"] == "success"


def test_failure_callback_gets_the_failed_task(env):
    run = env.run("cb_fail")
    env.drain()
    assert run.state == "failed"
    (call,) = calls(env, run)
    assert call["cb"] == "failure" and call["reason"] == "task_failure" and call["ti"] == ["bad", 1]
    assert call["state"] == "failed"


def test_dagrun_timeout_triggers_the_failure_callback(env):
    run = env.trigger("cb_timeout")
    env.scheduler.run_pass()  # started and claimed, but the worker never reports
    env.executor.take()
    env.clock.advance(seconds=6)
    env.scheduler.run_pass()
    assert env.store.get_run("cb_timeout", run.run_id).state == "failed"
    (request,) = [r for r in env.executor.take() if isinstance(r, DagCallbackRequest)]
    assert request.reason == "timed_out" and request.ti_key.task_id == "slow"
    run_dag_callbacks(request, store=env.store, loader=env.loader, now_fn=env.clock)
    (call,) = calls(env, run)
    assert call["reason"] == "timed_out"


def test_notifiers_render_their_fields_as_task_and_dag_callbacks(env):
    run = env.run("cb_notify")
    env.drain()
    notes = calls(env, run)
    assert [(n["message"], n["reason"]) for n in notes] == [
        ("task boom try 1", None), (f"{run.run_id} failed (task_failure) for data", "task_failure")]
    # The raw template field is a context key too, as in Airflow; and a warm worker renders afresh each time.
    assert notes[1]["merged"] == "{{ run_id }} failed ({{ reason }}) for {{ team }}"
    again = env.run("cb_notify", run_id="again")
    env.drain()
    assert [n["message"] for n in calls(env, again)] == ["task boom try 1", "again failed (task_failure) for data"]


def test_no_request_without_a_callback(env):
    run = env.run("cb_none")
    assert run.state == "success" and env.executor.take() == []
    assert env.logs.read(TIKey("cb_none", run.run_id, CALLBACK_LOG_TASK_ID), 1) is None


def test_racing_schedulers_send_one_request_per_run_end(env):
    """Four schedulers all read the run as running and all find it finished: only the one whose conditional
    write ends the run sends the request."""
    from tests.functional.scheduling.harness import scheduler_for
    from updraft.runtime.worker import handle_dispatch
    from updraft.scheduling.pass_report import PassReport

    run = env.trigger("cb_ok", run_id="race")
    env.scheduler.run_pass()
    (item,) = env.executor.take()
    stale = env.store.get_run("cb_ok", run.run_id)
    idle = SimpleNamespace(dag=env.scheduler.dag, schedule_run=lambda *_: PassReport(),  # no mini scheduler
                           metrics=env.scheduler.metrics, traces=env.scheduler.traces)
    handle_dispatch(item, store=env.store, loader=env.loader, scheduler=idle, now_fn=env.clock)

    class StaleReads:  # every racer works from the read it made before any of them wrote
        def __getattr__(self, name):
            return getattr(env.store, name)

        def get_run(self, dag_id, run_id):
            return dataclasses.replace(stale)

    racers = [scheduler_for(StaleReads(), env.clock) for _ in range(4)]
    for scheduler, _ in racers:
        scheduler.schedule_run("cb_ok", run.run_id)
    sent = [i for _, executor in racers for i in executor.take() if isinstance(i, DagCallbackRequest)]
    assert len(sent) == 1 and sent[0].reason == "success"
    assert env.store.get_run("cb_ok", run.run_id).state == "success"
