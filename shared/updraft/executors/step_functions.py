"""Deferred tries' waits as Step Functions executions (``scheduling.deferrals.Waits`` on AWS).

Both calls are idempotent, as at-least-once delivery needs: an execution's name is deterministic per deferral, so
a repeated start is ``ExecutionAlreadyExists`` (the wait is already running: fine), and stopping an execution that
ended or never started is ``ExecutionDoesNotExist`` (nothing to stop: fine).
"""

from __future__ import annotations

import datetime as dt
import functools
import json
from collections.abc import Callable
from typing import Any


def execution_arn(state_machine_arn: str, name: str) -> str:
    """``arn:...:stateMachine:<machine>`` -> ``arn:...:execution:<machine>:<name>`` (Step Functions' scheme)."""
    return state_machine_arn.replace(":stateMachine:", ":execution:", 1) + f":{name}"


def _error_code(exc: Exception) -> str:
    return str(getattr(exc, "response", {}).get("Error", {}).get("Code", ""))


class StepFunctionsWaits:
    """``client`` is a boto3 Step Functions client, or a function making one on first use (a route that may end a
    deferred try, such as a clear, builds the client only when there is a wait to stop)."""

    def __init__(self, client: Any | Callable[[], Any], state_machine_arn: str) -> None:
        self._client = client
        self.state_machine_arn = state_machine_arn

    @functools.cached_property
    def client(self) -> Any:
        return self._client() if callable(self._client) else self._client

    def start(self, name: str, execution_input: dict[str, Any]) -> None:
        try:
            self.client.start_execution(stateMachineArn=self.state_machine_arn, name=name,
                                        input=json.dumps(execution_input))
        except Exception as exc:
            if _error_code(exc) != "ExecutionAlreadyExists":
                raise

    def running_executions(self) -> list[tuple[str, dt.datetime]]:
        """(name, start) of the machine's running executions (ListExecutions, 100 a page): the deferral sweep's."""
        found: list[tuple[str, dt.datetime]] = []
        token: str | None = None
        while True:
            page = self.client.list_executions(stateMachineArn=self.state_machine_arn, statusFilter="RUNNING",
                                               maxResults=100, **({"nextToken": token} if token else {}))
            found += [(e["name"], e["startDate"]) for e in page.get("executions", ())]
            token = page.get("nextToken")
            if not token:
                return found

    def execution_status(self, name: str) -> str | None:
        """RUNNING, SUCCEEDED, FAILED, TIMED_OUT or ABORTED (DescribeExecution); None: it was never started."""
        try:
            return str(self.client.describe_execution(
                executionArn=execution_arn(self.state_machine_arn, name))["status"])
        except Exception as exc:
            if _error_code(exc) == "ExecutionDoesNotExist":
                return None
            raise

    def stop(self, name: str) -> None:
        try:
            self.client.stop_execution(executionArn=execution_arn(self.state_machine_arn, name),
                                       error="Updraft.WaitCancelled", cause="the deferred try was ended")
        except Exception as exc:
            if _error_code(exc) != "ExecutionDoesNotExist":
                raise
