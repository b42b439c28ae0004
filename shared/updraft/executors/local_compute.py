"""Local mode's Lambda and ECS: the two AWS calls that start code, answered by local mode itself.

moto records a Lambda invoke or an ECS RunTask but runs nothing without Docker (``notes/aws-offline.md``,
sections 2c and 2e). So in local mode ``Services.client("lambda")`` and ``client("ecs")`` are the small clients
below: they speak boto3's request and response shapes, so ``LambdaExecutor``, ``FargateExecutor`` and the
scheduler nudge run unchanged, and send each call over a Unix socket to the local system, which runs the
handler in its worker pool or starts the Fargate entrypoint as a process (``updraft.local.system``).

The wire format is one JSON document per message (never pickle), on a socket in a private directory.

These clients live beside the executors, below ``updraft.services``, not in ``updraft.local``: every process of
local mode (a worker, a Fargate entrypoint) builds its Services from the environment (``UPDRAFT_LOCAL_COMPUTE``),
so they cannot be handed in by local mode, and the services layer never imports the local mode above it.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import os
import time
from multiprocessing.connection import Client
from typing import Any

LAMBDA_INVOKE = "lambda.invoke"
ECS_RUN_TASK = "ecs.run_task"
STATES_CALL = "states.call"  # a Step Functions call, answered by local mode's engine (``local.step_functions``)


class LocalComputeError(RuntimeError):
    """The local system refused or could not be reached (it stopped, or the call is one it does not play)."""


def call(address: str, message: dict[str, Any], *, attempts: int = 20) -> dict[str, Any]:
    """One request and its reply. A refused connection (the backlog full for a moment) is tried again, as the
    AWS SDK retries a throttled invoke; a missing socket means local mode is gone."""
    payload = json.dumps(message, separators=(",", ":")).encode()
    for attempt in range(attempts):
        try:
            with Client(address, family="AF_UNIX") as conn:
                conn.send_bytes(payload)
                reply: dict[str, Any] = json.loads(conn.recv_bytes())
            break
        except (ConnectionRefusedError, BlockingIOError) as exc:
            if attempt == attempts - 1:
                raise LocalComputeError(f"the local Updraft at {address} refused {attempts} times ({exc})") from exc
            time.sleep(0.01 * (attempt + 1))
        except (OSError, EOFError) as exc:
            raise LocalComputeError(f"the local Updraft at {address} did not answer ({exc}); is it running?") from exc
    if "error" in reply:
        raise LocalComputeError(reply["error"])
    return reply


class LocalLambdaClient:
    """``invoke`` with ``InvocationType="Event"``: what the executors and the nudge use, and all Lambda gives
    the caller of an async invoke (a 202 once the event is queued)."""

    def __init__(self, address: str) -> None:
        self.address = address

    def invoke(self, *, FunctionName: str, InvocationType: str = "RequestResponse",
               Payload: bytes | str = b"{}", **_: Any) -> dict[str, Any]:
        if InvocationType != "Event":
            raise LocalComputeError(f"local mode plays asynchronous invokes only, not {InvocationType!r}")
        payload = json.loads(Payload or b"{}")
        call(self.address, {"op": LAMBDA_INVOKE, "function": FunctionName, "payload": payload})
        return {"StatusCode": 202}


class LocalEcsClient:
    """``run_task`` as ECS answers it; the request is passed whole, so the local system reads the same
    container overrides (the dispatch in ``UPDRAFT_DISPATCH``, cpu, memory) a Fargate task would get."""

    _ids = itertools.count(1)

    def __init__(self, address: str) -> None:
        self.address = address

    def run_task(self, **request: Any) -> dict[str, Any]:
        return call(self.address, {"op": ECS_RUN_TASK, "request": request,
                                   "task_id": f"{os.getpid()}-{next(self._ids)}"})


class LocalStepFunctionsClient:
    """``start_execution``, ``stop_execution`` and the deferral sweep's ``list_executions`` and
    ``describe_execution``, sent to local mode's engine; its refusals come back as the
    botocore ``ClientError`` boto3 raises (``ExecutionAlreadyExists``...), so callers handle both alike."""

    def __init__(self, address: str) -> None:
        self.address = address

    def _call(self, method: str, operation: str, request: dict[str, Any]) -> dict[str, Any]:
        reply = call(self.address, {"op": STATES_CALL, "method": method, "request": request})
        if "client_error" in reply:
            from botocore.exceptions import ClientError

            raise ClientError({"Error": reply["client_error"]}, operation)
        return reply

    def start_execution(self, **request: Any) -> dict[str, Any]:
        return self._call("start_execution", "StartExecution", request)

    def stop_execution(self, **request: Any) -> dict[str, Any]:
        return self._call("stop_execution", "StopExecution", request)

    def describe_execution(self, **request: Any) -> dict[str, Any]:
        return self._call("describe_execution", "DescribeExecution", request)

    def list_executions(self, **request: Any) -> dict[str, Any]:
        reply = self._call("list_executions", "ListExecutions", request)
        for execution in reply.get("executions", ()):  # the wire carries dates as text
            execution["startDate"] = dt.datetime.fromisoformat(execution["startDate"])
        return reply


def local_client(service: str, address: str) -> Any:
    if service == "lambda":
        return LocalLambdaClient(address)
    if service == "ecs":
        return LocalEcsClient(address)
    if service == "stepfunctions":
        return LocalStepFunctionsClient(address)
    raise ValueError(f"local mode plays Lambda, ECS and Step Functions, not {service!r}")
