"""The local Step Functions engine running the deferral state machine's own ASL, on a clock the test moves."""

from __future__ import annotations

import datetime as dt

import pytest
from botocore.exceptions import ClientError

from updraft.executors.step_functions import StepFunctionsWaits, execution_arn
from updraft.local.step_functions import LOCAL_STATE_MACHINE_ARN, LocalStepFunctions
from updraft.model.deferrals import execution_input, execution_name
from updraft.model.records import TaskInstance
from updraft.model.states import TaskInstanceState
from updraft.triggers.state_machine import definition

T0 = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


class World:
    def __init__(self, **engine_kwargs) -> None:
        self.now = T0
        self.invokes: list[tuple[str, dict]] = []
        self.engine = LocalStepFunctions(definition("worker-fn", "check-fn"), invoke=lambda f, p: self.invokes.append((f, p)),
                                         clock=lambda: self.now, **engine_kwargs)
        self.waits = StepFunctionsWaits(self.engine, LOCAL_STATE_MACHINE_ARN)

    def deferred(self, *, resume_at: dt.datetime, kind: str = "wait", task_id: str = "t") -> TaskInstance:
        return TaskInstance("d", "r", task_id, state=TaskInstanceState.DEFERRED, try_number=1, try_id="tok",
                            trigger={"kind": kind, "resume_at": resume_at.isoformat()})

    def start(self, ti: TaskInstance) -> str:
        name = execution_name(ti.key, ti.try_number, str(ti.try_id))
        self.waits.start(name, execution_input(ti))
        return name

    def status(self, name: str) -> str:
        return self.engine.describe_execution(executionArn=execution_arn(LOCAL_STATE_MACHINE_ARN, name))["status"]


def test_an_hour_wait_resumes_the_worker_once_at_its_time():
    world = World()
    ti = world.deferred(resume_at=T0 + dt.timedelta(hours=1, microseconds=5))
    name = world.start(ti)
    world.start(ti)  # a repeated start (at-least-once delivery): ExecutionAlreadyExists, swallowed
    world.engine.run_due()
    world.now = T0 + dt.timedelta(hours=1)
    world.engine.run_due()
    assert world.invokes == [] and world.status(name) == "RUNNING"  # rounded up: never wakes before the moment
    assert world.engine.next_wake() == T0 + dt.timedelta(hours=1, seconds=1)
    world.now += dt.timedelta(seconds=1)
    world.engine.run_due()
    assert world.invokes == [("worker-fn", {"kind": "resume_deferred", "dag_id": "d", "run_id": "r",
                                            "task_id": "t", "map_index": -1, "try_number": 1, "try_id": "tok"})]
    assert world.status(name) == "SUCCEEDED"
    assert world.engine.executions[name].history == ["TriggerKind", "WaitUntilResumeAt", "ResumeOnWorker"]
    world.engine.run_due()
    assert len(world.invokes) == 1


def test_a_stopped_wait_never_resumes_and_stopping_twice_or_a_missing_one_is_harmless():
    world = World()
    name = world.start(world.deferred(resume_at=T0 + dt.timedelta(minutes=5)))
    world.engine.run_due()
    world.waits.stop(name)
    world.waits.stop(name)
    world.waits.stop("never-started")
    world.now += dt.timedelta(hours=1)
    world.engine.run_due()
    assert world.invokes == [] and world.status(name) == "ABORTED"
    with pytest.raises(ClientError) as refused:
        world.engine.stop_execution(executionArn=execution_arn(LOCAL_STATE_MACHINE_ARN, "never-started"))
    assert refused.value.response["Error"]["Code"] == "ExecutionDoesNotExist"


def test_polling_loops_check_wait_check_until_fired_and_an_unknown_kind_fails():
    answers = iter(["waiting", "waiting", "fired"])
    checks: list[tuple[str, dict]] = []

    def check(function: str, state: dict) -> dict:
        checks.append((function, state))
        return {**state, "outcome": next(answers), "poll_seconds": 30}

    world = World(call=check)
    poll = world.start(world.deferred(resume_at=T0, kind="poll", task_id="p"))
    odd = world.start(world.deferred(resume_at=T0, kind="odd", task_id="o"))
    world.engine.run_due()
    assert (world.status(odd), world.engine.executions[odd].error) == ("FAILED", "Updraft.UnknownTriggerKind")
    assert len(checks) == 1 and checks[0][0] == "check-fn" and world.invokes == []
    world.now += dt.timedelta(seconds=29)
    world.engine.run_due()
    assert len(checks) == 1  # the Wait between looks is the check's poll_seconds
    world.now += dt.timedelta(seconds=1)
    world.engine.run_due()
    world.now += dt.timedelta(seconds=30)
    world.engine.run_due()
    assert len(checks) == 3 and world.status(poll) == "SUCCEEDED"
    assert world.invokes == [("worker-fn", checks[0][1]["resume"])]


def test_a_poll_without_a_check_handler_fails_naming_the_invoke():
    world = World()
    poll = world.start(world.deferred(resume_at=T0, kind="poll", task_id="p"))
    world.engine.run_due()
    execution = world.engine.executions[poll]
    assert (execution.status, execution.error) == ("FAILED", "States.TaskFailed")
    assert "RequestResponse" in str(execution.cause)


def test_skipping_waits_resumes_at_once_and_says_how_much_time_it_skipped():
    skipped: list[tuple[str, dt.timedelta]] = []
    world = World(skip_waits=True, on_skip=lambda name, span: skipped.append((name, span)))
    name = world.start(world.deferred(resume_at=T0 + dt.timedelta(minutes=10)))
    world.engine.run_due()
    assert skipped == [(name, dt.timedelta(minutes=10))] and len(world.invokes) == 1


def test_a_failing_resume_invoke_fails_the_execution():
    def refuse(function: str, payload: dict) -> None:
        raise RuntimeError("local mode is stopping")

    engine = LocalStepFunctions(definition("worker-fn", "check-fn"), invoke=refuse, clock=lambda: T0)
    engine.start_execution(stateMachineArn=LOCAL_STATE_MACHINE_ARN, name="x",
                           input='{"kind": "wait", "resume_at": "2023-01-01T00:00:00Z", "resume": {}}')
    engine.run_due()
    assert (engine.executions["x"].status, engine.executions["x"].error) == ("FAILED", "States.TaskFailed")


@pytest.mark.parametrize(("state", "message"), [
    ({"Type": "Parallel", "Branches": [], "End": True}, "does not run 'Parallel'"),
    ({"Type": "Pass", "InputPath": "$.x", "End": True}, "does not run ['InputPath']"),
    ({"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage", "End": True}, "runs only"),
])
def test_what_the_engine_does_not_run_is_refused_when_it_is_built(state, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        LocalStepFunctions({"StartAt": "S", "States": {"S": state}}, invoke=lambda f, p: None, clock=lambda: T0)
