"""A local Step Functions engine: runs the deferral state machine's own ASL (``updraft.triggers.state_machine``)
with an injectable clock, so ``updraft local``, ``updraft dags test`` and tests wait the way AWS does, and a test
of a one-hour wait takes milliseconds.

moto's Step Functions records executions but does not run Lambda tasks (``notes/aws-offline.md``), so this engine
plays the few states the definition uses: ``Choice`` (``StringEquals``/``BooleanEquals`` on a ``Variable``),
``Wait`` (``Seconds``, ``SecondsPath``, ``Timestamp``, ``TimestampPath``), ``Pass``, ``Task`` on
``arn:aws:states:::lambda:invoke`` (an ``Event`` invoke is handed to ``invoke(function, payload)``: local mode's
worker pool; a ``RequestResponse`` invoke is ``call(function, payload)``, in-process, its answer the state's result
``{"Payload": ...}`` filtered by ``OutputPath``), ``Succeed`` and ``Fail``. A definition using anything else is
refused when the engine is built, naming it. ``Retry`` is accepted and not played: a local invoke is handed over
in-process and has no Lambda service errors to retry.

It answers the calls Updraft makes as boto3's client does (``start_execution``, ``stop_execution``,
``describe_execution``, ``list_executions``; ``ExecutionAlreadyExists``/``ExecutionDoesNotExist`` as botocore
``ClientError``s), so ``executors.step_functions.StepFunctionsWaits`` drives it unchanged. Time moves when
``run_due`` is called: the owner calls it on its loop (or a test after advancing its clock). With ``skip_waits``
(``dags test``) a Wait to a timestamp (a time trigger's) ends at once and ``on_skip`` is told how much time was
skipped, so the skip is never silent; a Wait of seconds (between a polling trigger's looks) is played, as skipping
it would only look again.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import threading
from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

from updraft.executors.step_functions import execution_arn

LOCAL_STATE_MACHINE_ARN = "arn:aws:states:us-east-1:123456789012:stateMachine:updraft-local-deferrals"
_SUPPORTED = {
    "Choice": {"Type", "Choices", "Default", "Comment"},
    "Wait": {"Type", "Seconds", "SecondsPath", "Timestamp", "TimestampPath", "Next", "End", "Comment"},
    "Pass": {"Type", "Next", "End", "Comment"},
    "Task": {"Type", "Resource", "Parameters", "OutputPath", "Retry", "Next", "End", "Comment"},
    "Succeed": {"Type", "Comment"},
    "Fail": {"Type", "Error", "Cause", "Comment"},
}
_INVOKE = "arn:aws:states:::lambda:invoke"


def _client_error(code: str, message: str, operation: str) -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": message}}, operation)


def _path(data: Any, path: str) -> Any:
    """A reference path (``$``, ``$.a.b``): the subset of JSONPath the definition uses."""
    if path == "$":
        return data
    if not path.startswith("$."):
        raise ValueError(f"unsupported path {path!r} (only $ and $.field.field)")
    for part in path[2:].split("."):
        if not isinstance(data, dict) or part not in data:
            raise KeyError(f"path {path!r} not found in the state's input")
        data = data[part]
    return data


def _parameters(template: dict[str, Any], data: Any) -> dict[str, Any]:
    return {name[:-2] if name.endswith(".$") else name: _path(data, value) if name.endswith(".$") else value
            for name, value in template.items()}


def _timestamp(value: str) -> dt.datetime:
    return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))


@dataclasses.dataclass
class Execution:
    name: str
    arn: str
    input: Any
    state: str
    status: str = "RUNNING"  # RUNNING, SUCCEEDED, FAILED, ABORTED (Step Functions' statuses)
    wake_at: dt.datetime | None = None  # set while in a Wait state
    error: str | None = None
    cause: str | None = None
    started_at: dt.datetime | None = None
    history: list[str] = dataclasses.field(default_factory=list)  # the states entered, in order


class LocalStepFunctions:
    def __init__(self, definition: dict[str, Any], *, invoke: Callable[[str, Any], None],
                 clock: Callable[[], dt.datetime], state_machine_arn: str = LOCAL_STATE_MACHINE_ARN,
                 skip_waits: bool = False, on_skip: Callable[[str, dt.timedelta], None] | None = None,
                 call: Callable[[str, Any], Any] | None = None) -> None:
        self.definition = definition
        self.states: dict[str, dict[str, Any]] = definition["States"]
        self._validate()
        self.invoke = invoke
        self.call = call
        self.clock = clock
        self.state_machine_arn = state_machine_arn
        self.skip_waits = skip_waits
        self.on_skip = on_skip
        self.executions: dict[str, Execution] = {}
        self._lock = threading.RLock()

    def _validate(self) -> None:
        if self.definition.get("StartAt") not in self.states:
            raise ValueError("the definition's StartAt names no state")
        for name, state in self.states.items():
            kind = state.get("Type")
            if kind not in _SUPPORTED:
                raise ValueError(f"state {name!r}: the local engine does not run {kind!r} states")
            extra = set(state) - _SUPPORTED[kind]
            if extra:
                raise ValueError(f"state {name!r}: the local engine does not run {sorted(extra)}")
            if kind == "Task" and state.get("Resource") != _INVOKE:
                raise ValueError(f"state {name!r}: the local engine runs only {_INVOKE} tasks")

    # ------------------------------------------------------------------------------------- boto3's calls
    def start_execution(self, *, stateMachineArn: str, name: str, input: str = "{}", **_: Any) -> dict[str, Any]:
        if stateMachineArn != self.state_machine_arn:
            raise _client_error("StateMachineDoesNotExist", f"no state machine {stateMachineArn}", "StartExecution")
        arn = execution_arn(self.state_machine_arn, name)
        with self._lock:
            if name in self.executions:
                raise _client_error("ExecutionAlreadyExists", f"Execution Already Exists: '{arn}'", "StartExecution")
            self.executions[name] = Execution(name, arn, json.loads(input), self.definition["StartAt"],
                                              started_at=self.clock())
        return {"executionArn": arn, "startDate": self.clock()}

    def stop_execution(self, *, executionArn: str, error: str | None = None, cause: str | None = None,
                       **_: Any) -> dict[str, Any]:
        with self._lock:
            execution = self._by_arn(executionArn, "StopExecution")
            if execution.status == "RUNNING":
                execution.status, execution.error, execution.cause = "ABORTED", error, cause
        return {"stopDate": self.clock()}

    def describe_execution(self, *, executionArn: str, **_: Any) -> dict[str, Any]:
        with self._lock:
            execution = self._by_arn(executionArn, "DescribeExecution")
            return {"executionArn": execution.arn, "name": execution.name, "status": execution.status,
                    "input": json.dumps(execution.input), "startDate": execution.started_at,
                    "error": execution.error, "cause": execution.cause}

    def list_executions(self, *, stateMachineArn: str, statusFilter: str | None = None, **_: Any) -> dict[str, Any]:
        """All of them in one page (a local engine holds few)."""
        with self._lock:
            return {"executions": [{"executionArn": e.arn, "name": e.name, "status": e.status,
                                    "startDate": e.started_at} for e in self.executions.values()
                                   if statusFilter is None or e.status == statusFilter]}

    def _by_arn(self, arn: str, operation: str) -> Execution:
        for execution in self.executions.values():
            if execution.arn == arn:
                return execution
        raise _client_error("ExecutionDoesNotExist", f"Execution Does Not Exist: '{arn}'", operation)

    # ------------------------------------------------------------------------------------------ running
    def running(self) -> list[Execution]:
        with self._lock:
            return [e for e in self.executions.values() if e.status == "RUNNING"]

    def next_wake(self) -> dt.datetime | None:
        """When the earliest waiting execution wakes (None: none waits)."""
        wakes = [e.wake_at for e in self.running() if e.wake_at is not None]
        return min(wakes) if wakes else None

    def run_due(self) -> int:
        """Run every execution until it waits for a later time or ends; how many states ran."""
        ran = 0
        while True:
            now = self.clock()
            due = [e for e in self.running() if e.wake_at is None or e.wake_at <= now]
            if not due:
                return ran
            for execution in due:
                ran += self._step(execution, now)

    def _step(self, execution: Execution, now: dt.datetime) -> int:
        """Run ``execution``'s current state once; 0 when it waits on."""
        with self._lock:
            if execution.status != "RUNNING":
                return 0
            name = execution.state
            state = self.states[name]
            if execution.wake_at is None:
                execution.history.append(name)
        kind = state["Type"]
        try:
            if kind == "Wait" and not self._waited(execution, state, now):
                return 0
            if kind == "Choice":
                self._goto(execution, self._choose(state, execution.input))
                return 1
            if kind == "Task":
                parameters = _parameters(state.get("Parameters", {}), execution.input)
                with self._lock:
                    if execution.status != "RUNNING":  # stopped while it waited: no invoke
                        return 0
                if parameters.get("InvocationType") == "Event":
                    self.invoke(parameters["FunctionName"], parameters.get("Payload"))
                elif parameters.get("InvocationType") == "RequestResponse" and self.call is not None:
                    result = {"Payload": self.call(parameters["FunctionName"], parameters.get("Payload"))}
                    execution.input = _path(result, state.get("OutputPath", "$"))
                else:
                    raise ValueError(f"the local engine has no handler for {parameters.get('InvocationType')!r} "
                                     "invokes")
            if kind == "Fail":
                self._end(execution, "FAILED", state.get("Error"), state.get("Cause"))
            elif kind == "Succeed" or state.get("End"):
                self._end(execution, "SUCCEEDED")
            else:
                self._goto(execution, state["Next"])
        except Exception as exc:  # a failing state fails the execution, as on AWS
            self._end(execution, "FAILED", "States.TaskFailed" if kind == "Task" else "States.Runtime",
                      f"{type(exc).__name__}: {exc}")
        return 1

    def _waited(self, execution: Execution, state: dict[str, Any], now: dt.datetime) -> bool:
        """Whether the Wait state is over (it starts on first visit)."""
        if execution.wake_at is None:
            wake = self._wake_time(state, execution.input, now)
            if self.skip_waits and wake > now and ({"Timestamp", "TimestampPath"} & set(state)):
                if self.on_skip is not None:
                    self.on_skip(execution.name, wake - now)
                wake = now
            execution.wake_at = wake
        if execution.wake_at > now:
            return False
        execution.wake_at = None
        return True

    @staticmethod
    def _wake_time(state: dict[str, Any], data: Any, now: dt.datetime) -> dt.datetime:
        if "Seconds" in state:
            return now + dt.timedelta(seconds=state["Seconds"])
        if "SecondsPath" in state:
            return now + dt.timedelta(seconds=float(_path(data, state["SecondsPath"])))
        if "Timestamp" in state:
            return _timestamp(state["Timestamp"])
        return _timestamp(str(_path(data, state["TimestampPath"])))

    @staticmethod
    def _choose(state: dict[str, Any], data: Any) -> str:
        for rule in state.get("Choices", []):
            try:
                value = _path(data, rule["Variable"])
            except KeyError:
                continue
            if "StringEquals" in rule and value == rule["StringEquals"]:
                return str(rule["Next"])
            if "BooleanEquals" in rule and value is rule["BooleanEquals"]:
                return str(rule["Next"])
            if not {"StringEquals", "BooleanEquals"} & set(rule):
                raise ValueError(f"the local engine does not evaluate the choice rule {sorted(rule)}")
        if "Default" not in state:
            raise ValueError("States.NoChoiceMatched")
        return str(state["Default"])

    def _goto(self, execution: Execution, name: str) -> None:
        with self._lock:
            if execution.status == "RUNNING":
                execution.state = name

    def _end(self, execution: Execution, status: str, error: str | None = None, cause: str | None = None) -> None:
        with self._lock:
            if execution.status == "RUNNING":
                execution.status, execution.error, execution.cause = status, error, cause
