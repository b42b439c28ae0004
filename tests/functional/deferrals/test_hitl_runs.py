"""Human-in-the-loop tasks in real runs (the runtime harness, the deferral ASL on the local engine, the test's
clock): a response through the REST route resumes the task at once and the branch operator follows it; a response
timeout ends the wait with the defaults, or fails the task with HITLTimeoutError when there are none; Reject skips
the approval's downstream tasks."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from moto import mock_aws

from tests.functional.deferrals.defer_harness import DeferralEnv
from updraft.api.request import Request
from updraft.api.routes.hitl import update_hitl_detail
from updraft.api.routing import Call
from updraft.model.states import TaskInstanceState as TI

HITL_DAG = """
from airflow.providers.standard.operators.hitl import (
    ApprovalOperator, HITLBranchOperator, HITLEntryOperator, HITLOperator)

from airflow.sdk.bases.notifier import BaseNotifier


class Asked(BaseNotifier):
    template_fields = ("message",)

    def __init__(self, message):
        self.message = message

    def notify(self, context):
        self.log.info("%s at %s", self.message, HITLOperator.generate_link_to_ui_from_context(
            context=context, base_url="http://ui.example"))


with DAG("hitl_dag", schedule=None, start_date=START):
    entry = HITLEntryOperator(task_id="entry", subject="Fill in {{ dag.dag_id }}",
                              params={"n": Param(1, type="integer")}, notifiers=[Asked("asked: {{ task.subject }}")])
    choose = HITLBranchOperator(task_id="choose", subject="Which way?", options=["Go left", "right"],
                                options_mapping={"Go left": "left"})
    left = EmptyOperator(task_id="left")
    right = PythonOperator(task_id="right", python_callable=lambda: "right ran")
    entry >> choose >> [left, right]
"""

TIMEOUTS_DAG = """
from airflow.providers.standard.operators.hitl import ApprovalOperator, HITLOperator

with DAG("hitl_timeouts", schedule=None, start_date=START):
    HITLOperator(task_id="defaulted", subject="Pick", options=["x", "y"], defaults="y",
                 response_timeout=datetime.timedelta(minutes=10))
    HITLOperator(task_id="unanswered", subject="Pick", options=["x", "y"],
                 response_timeout=datetime.timedelta(minutes=10))
    approve = ApprovalOperator(task_id="approve", subject="Ship it?", defaults="Reject",
                               response_timeout=datetime.timedelta(minutes=20))
    approve >> EmptyOperator(task_id="shipped")
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    with mock_aws():
        env = DeferralEnv(tmp_path_factory.mktemp("hitl_runs"), parallelism=4)
        env.in_process = True  # tries in this process: half the time (the same tests pass with children)
        env.add("hitl_dag", HITL_DAG)
        env.add("hitl_timeouts", TIMEOUTS_DAG)
        yield env


def _respond(env, run_id: str, task_id: str, body: dict) -> dict:
    """The REST route's function, called as API Gateway would call it for user ``ann``."""
    services = SimpleNamespace(store=env.store, waits=env.waits, config=SimpleNamespace(iam_caller_role="USER"),
                               nudge_scheduler=env.scheduler.schedule_run)
    request = Request("PATCH", "", {"dag_id": "hitl_dag", "dag_run_id": run_id, "task_id": task_id,
                                    "map_index": "-1"}, body=json.dumps(body),
                      context={"authorizer": {"claims": {"cognito:username": "ann", "cognito:groups": "User"}}})
    return update_hitl_detail(Call(request, lambda: services, now=env.clock))


def test_a_response_resumes_the_task_at_once_and_the_branch_follows_it(env):
    run = env.trigger("hitl_dag", logical_date=env.clock())
    env.step()
    assert env.states("hitl_dag", run.run_id)["entry"] == "deferred"
    entry = env.ti("hitl_dag", run.run_id, "entry")
    assert entry.hitl["subject"] == "Fill in hitl_dag" and entry.hitl["defaults"] == ["OK"]
    assert env.status_of(entry) is None  # no response timeout: nothing waits on Step Functions
    assert ("asked: Fill in hitl_dag at http://ui.example/dags/hitl_dag/runs/" in env.log("hitl_dag", run.run_id, "entry"))

    _respond(env, run.run_id, "entry", {"chosen_options": ["OK"], "params_input": {"n": 5}})
    env.drain()  # no clock advance: the response itself resumed it
    assert env.states("hitl_dag", run.run_id)["entry"] == "success"
    assert env.xcom("hitl_dag", run.run_id, "entry")["params_input"] == {"n": 5}
    assert env.states("hitl_dag", run.run_id)["choose"] == "deferred"

    _respond(env, run.run_id, "choose", {"chosen_options": ["right"]})
    env.drain()
    env.step()
    states = env.states("hitl_dag", run.run_id)
    assert (states["choose"], states["left"], states["right"]) == ("success", "skipped", "success")
    assert env.ti("hitl_dag", run.run_id, "choose").try_number == 1
    assert env.store.get_run("hitl_dag", run.run_id).state.value == "success"
    assert env.xcom("hitl_dag", run.run_id, "choose") == ["right"]


@pytest.mark.slow
def test_a_timeout_resumes_with_the_defaults_or_fails_without_them(env):
    run = env.trigger("hitl_timeouts", logical_date=env.clock())
    env.step()
    states = env.states("hitl_timeouts", run.run_id)
    assert [states[t] for t in ("defaulted", "unanswered", "approve")] == ["deferred"] * 3
    env.advance(minutes=11)  # past the timeout (a wait ends on the whole second after it)
    states = env.states("hitl_timeouts", run.run_id)
    assert (states["defaulted"], states["unanswered"], states["approve"]) == ("success", "failed", "deferred")
    defaulted = env.ti("hitl_timeouts", run.run_id, "defaulted")
    assert defaulted.hitl["chosen_options"] == ["y"] and defaulted.hitl["responded_by"] is None
    assert env.xcom("hitl_timeouts", run.run_id, "defaulted")["chosen_options"] == ["y"]
    assert "HITLTimeoutError" in env.log("hitl_timeouts", run.run_id, "unanswered")
    assert env.ti("hitl_timeouts", run.run_id, "unanswered").hitl["responded_at"] is None

    env.advance(minutes=10)  # the approval's default, Reject, skips what follows it
    states = env.states("hitl_timeouts", run.run_id)
    assert (states["approve"], states["shipped"]) == ("success", "skipped")
    assert env.store.get_run("hitl_timeouts", run.run_id).state.value == "failed"
    assert env.xcom("hitl_timeouts", run.run_id, "approve")["chosen_options"] == ["Reject"]
    assert env.ti("hitl_timeouts", run.run_id, "unanswered").state == TI.FAILED
