"""Runs tries as Fargate tasks: one ``run_task`` per dispatch, sized by the task's ``executor_config``.

The container runs the worker entrypoint (``python -m functions.worker.handler`` by default) with the dispatch as
JSON in ``UPDRAFT_DISPATCH``: identity and fencing token only, never code. ``clientToken`` is the try's
``try_id``, so ECS starts one task even if the same dispatch is sent twice; the worker's fence covers the rest.
``securityGroups`` is always passed (moto needs it, and an explicit list is what a reviewer wants to see) and
the task is tagged with its try so the console and Cost Explorer can find it.

A refused ``run_task`` is logged and the try stays queued for the scheduler's queued timeout, as in
``LambdaExecutor``.

A task that stops without its try ending (out of memory, killed, the container crashed or never started) is seen
through ECS's task state change event, which an EventBridge rule sends to the scheduler: :func:`lost_try` reads
the try from the event's own container overrides (the dispatch this executor set) and the container's exit.
"""

from __future__ import annotations

import collections
import json
import logging
import re
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from updraft.executors.base import Dispatch, LostTry

if TYPE_CHECKING:
    from mypy_boto3_ecs import ECSClient

log = logging.getLogger(__name__)

DISPATCH_ENV = "UPDRAFT_DISPATCH"
DEFAULT_COMMAND = ("python", "-m", "functions.worker.handler")
STARTED_BY = "updraft"  # RunTask's startedBy: the stack's stopped-task rule matches it
# ECS tag values: letters, digits, spaces and _ . : / = + - @, at most 256 characters.
_TAG_UNSAFE = re.compile(r"[^\w .:/=+\-@]")


def _tag(value: object) -> str:
    return _TAG_UNSAFE.sub("_", str(value))[:256]


class FargateExecutor:
    # Like LambdaExecutor: a claim pass sends its run_task calls from a few threads at once.
    dispatches_over_network = True

    def __init__(self, ecs_client: ECSClient, cluster: str, task_definition: str, subnets: Sequence[str],
                 security_groups: Sequence[str], container_name: str, *, assign_public_ip: bool = False,
                 command: Sequence[str] = DEFAULT_COMMAND, environment: dict[str, str] | None = None) -> None:
        self.ecs_client = ecs_client
        self.cluster = cluster
        self.task_definition = task_definition
        self.subnets = list(subnets)
        self.security_groups = list(security_groups)
        self.container_name = container_name
        self.assign_public_ip = assign_public_ip
        self.command = list(command)
        self.environment = dict(environment or {})
        self._lock = threading.Lock()
        # Bounded like LambdaExecutor's: a warm container must not grow with every task it ever started.
        self.failures = 0
        self.failed: collections.deque[Dispatch] = collections.deque(maxlen=100)
        self.task_arns: collections.OrderedDict[str, str] = collections.OrderedDict()  # recent try_id -> ARN

    def run_task_request(self, item: Dispatch) -> dict[str, Any]:
        """The ``run_task`` arguments for one dispatch (separate so tests and the docs can show it)."""
        env = {**self.environment, DISPATCH_ENV: json.dumps(item.to_payload(), separators=(",", ":"))}
        container: dict[str, Any] = {"name": self.container_name, "command": self.command,
                                     "environment": [{"name": k, "value": v} for k, v in sorted(env.items())]}
        overrides: dict[str, Any] = {"containerOverrides": [container]}
        cpu, memory = item.compute.get("cpu"), item.compute.get("memory")
        if cpu:
            overrides["cpu"] = str(cpu)
            container["cpu"] = int(cpu)
        if memory:
            overrides["memory"] = str(memory)
            container["memory"] = int(memory)
        key = item.key
        tags = {"updraft:dag_id": key.dag_id, "updraft:run_id": key.run_id, "updraft:task_id": key.task_id,
                "updraft:map_index": key.map_index, "updraft:try_number": item.try_number}
        return {
            "cluster": self.cluster,
            "taskDefinition": self.task_definition,
            "launchType": "FARGATE",
            "count": 1,
            "clientToken": item.try_id[:64],
            "startedBy": STARTED_BY,
            "networkConfiguration": {"awsvpcConfiguration": {
                "subnets": self.subnets,
                "securityGroups": self.security_groups,
                "assignPublicIp": "ENABLED" if self.assign_public_ip else "DISABLED",
            }},
            "overrides": overrides,
            "tags": [{"key": k, "value": _tag(v)} for k, v in tags.items()],
            "propagateTags": "TASK_DEFINITION",
        }

    def dispatch(self, items: list[Dispatch]) -> None:
        for item in items:
            try:
                response = self.ecs_client.run_task(**self.run_task_request(item))
            except Exception:
                log.exception("run_task for %s try %s failed; the queued timeout will retry it",
                              item.key.label, item.try_number)
                self._fail(item)
                continue
            tasks, failures = response.get("tasks") or [], response.get("failures") or []
            if failures or not tasks:
                log.error("run_task for %s try %s was refused: %s", item.key.label, item.try_number, failures)
                self._fail(item)
                continue
            with self._lock:
                self.task_arns[item.try_id] = tasks[0]["taskArn"]
                while len(self.task_arns) > 1000:
                    self.task_arns.popitem(last=False)

    def _fail(self, item: Dispatch) -> None:
        with self._lock:
            self.failures += 1
            self.failed.append(item)


TASK_STATE_CHANGE = "ECS Task State Change"  # the detail-type of ECS's task events on EventBridge (source aws.ecs)


def lost_try(detail: dict[str, Any]) -> LostTry | None:
    """The try a STOPPED worker task lost, from the ``detail`` of ECS's task state change event; None when the
    worker container exited 0 (its worker ended the try, or handed it on: deferred, rescheduled, not runnable, so
    a stop arriving after the try resumed in another task changes nothing) or the task is no dispatch of this
    executor. A non-zero exit (an uncaught error, 137 for a kill or an out-of-memory, 143 for a SIGTERM) or no exit
    at all (the container never ran: the image could not be pulled, the task could not start) is a loss.
    ValueError naming the problem for a detail that is not a stopped task's."""
    if detail.get("lastStatus") != "STOPPED":
        raise ValueError(f"not a stopped task: lastStatus {detail.get('lastStatus')!r}")
    overrides = (detail.get("overrides") or {}).get("containerOverrides") or []
    found = [(o.get("name"), e.get("value")) for o in overrides if isinstance(o, dict)
             for e in o.get("environment") or [] if isinstance(e, dict) and e.get("name") == DISPATCH_ENV]
    if not found:
        return None
    (container_name, raw), *_ = found
    dispatch = Dispatch.from_payload(json.loads(raw or "null"))
    containers = [c for c in detail.get("containers") or [] if isinstance(c, dict) and c.get("name") == container_name]
    exit_code = containers[0].get("exitCode") if containers else None
    if exit_code == 0:
        return None
    said = [f"{detail.get('stopCode') or 'stopped'}: {detail.get('stoppedReason') or 'no reason given'}"]
    if containers and containers[0].get("reason"):
        said.append(str(containers[0]["reason"]))
    said.append(f"exit code {exit_code}" if exit_code is not None else "the container never ran")
    return LostTry(dispatch, f"Fargate task {detail.get('taskArn', '?')} stopped ({'; '.join(said)})")
