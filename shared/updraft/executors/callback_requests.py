"""Requests to run user callbacks on a worker: Airflow's ``DagCallbackRequest`` and ``TaskCallbackRequest``.

The scheduler never imports user code. When it ends a run whose DAG has ``on_success_callback`` or
``on_failure_callback``, or fails a try whose worker went quiet (a zombie, an execution timeout the worker did not
enforce) for a task with failure/retry callbacks or email alerts, it sends one of these through the same executors
as a try (always the Lambda executor, the default: callbacks are short). Each is a ``Dispatch`` whose ``try_id`` is
the request's deterministic id (Fargate's ``clientToken`` and the worker's run-once fence see a duplicate as one)
and whose key names the log the callbacks write, never a real task's try log:

- a DAG's callbacks: ``<dag_id>/<run_id>/@dag_callbacks/-1/1``; the payload says which callbacks (``success``),
  Airflow's ``reason`` ("success", "task_failure", "all_tasks_deadlocked", "timed_out") and the task instance the
  context is built around (Airflow's ``last_ti``), if any;
- a task's: ``<dag_id>/<run_id>/@callbacks.<task_id>/<map_index>/<try>``; the payload says whether the try will
  be retried (``on_retry_callback`` and ``email_on_retry``, else the failure ones) and why it failed.

"@" is not allowed in a task id, so these keys never collide with a task's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from updraft.executors.base import Dispatch
from updraft.model.records import UNMAPPED, TIKey

DAG_KIND = "dag_callback"
TASK_KIND = "task_callback"
CALLBACK_LOG_TASK_ID = "@dag_callbacks"
TASK_CALLBACK_LOG_PREFIX = "@callbacks."


def _fields(payload: object, kind: str, strings: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(payload, dict) or payload.get("kind") != kind:
        raise ValueError(f"a callback payload is a JSON object with kind {kind!r}")
    for name in strings:
        if not isinstance(payload.get(name), str) or not payload[name]:
            raise ValueError(f"callback payload field {name!r} must be a non-empty string")
    return payload


def _int(payload: dict[str, Any], name: str, default: int) -> int:
    value = payload.get(name, default)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"callback payload field {name!r} must be an integer")
    return value


def _bool(payload: dict[str, Any], name: str) -> bool:
    if not isinstance(payload.get(name), bool):
        raise ValueError(f"callback payload field {name!r} must be a boolean")
    return bool(payload[name])


@dataclass(frozen=True)
class DagCallbackRequest(Dispatch):
    success: bool = False
    reason: str = ""
    ti_task_id: str | None = None
    ti_map_index: int = UNMAPPED

    @classmethod
    def for_run(cls, dag_id: str, run_id: str, *, request_id: str, success: bool, reason: str,
                ti_key: TIKey | None) -> DagCallbackRequest:
        return cls(TIKey(dag_id, run_id, CALLBACK_LOG_TASK_ID, UNMAPPED), 1, request_id, success=success,
                   reason=reason, ti_task_id=ti_key.task_id if ti_key else None,
                   ti_map_index=ti_key.map_index if ti_key else UNMAPPED)

    @property
    def request_id(self) -> str:
        return self.try_id

    @property
    def ti_key(self) -> TIKey | None:
        if self.ti_task_id is None:
            return None
        return TIKey(self.key.dag_id, self.key.run_id, self.ti_task_id, self.ti_map_index)

    def to_payload(self) -> dict[str, Any]:
        return {"kind": DAG_KIND, "dag_id": self.key.dag_id, "run_id": self.key.run_id,
                "request_id": self.try_id, "success": self.success, "reason": self.reason,
                "ti_task_id": self.ti_task_id, "ti_map_index": self.ti_map_index}

    @classmethod
    def from_payload(cls, payload: object) -> DagCallbackRequest:
        """The inverse of ``to_payload``; ValueError naming the bad field for anything else."""
        fields = _fields(payload, DAG_KIND, ("dag_id", "run_id", "request_id", "reason"))
        task_id = fields.get("ti_task_id")
        if task_id is not None and (not isinstance(task_id, str) or not task_id):
            raise ValueError("callback payload field 'ti_task_id' must be a non-empty string or null")
        map_index = _int(fields, "ti_map_index", UNMAPPED)
        ti_key = TIKey(fields["dag_id"], fields["run_id"], task_id, map_index) if task_id else None
        return cls.for_run(fields["dag_id"], fields["run_id"], request_id=fields["request_id"],
                           success=_bool(fields, "success"), reason=fields["reason"], ti_key=ti_key)


@dataclass(frozen=True)
class TaskCallbackRequest(Dispatch):
    retried: bool = False
    message: str = ""
    ti_task_id: str = ""

    @classmethod
    def for_try(cls, ti_key: TIKey, try_number: int, *, request_id: str, retried: bool,
                message: str) -> TaskCallbackRequest:
        log_key = TIKey(ti_key.dag_id, ti_key.run_id, TASK_CALLBACK_LOG_PREFIX + ti_key.task_id, ti_key.map_index)
        return cls(log_key, try_number, request_id, retried=retried, message=message, ti_task_id=ti_key.task_id)

    @property
    def request_id(self) -> str:
        return self.try_id

    @property
    def ti_key(self) -> TIKey:
        return TIKey(self.key.dag_id, self.key.run_id, self.ti_task_id, self.key.map_index)

    def to_payload(self) -> dict[str, Any]:
        return {"kind": TASK_KIND, "dag_id": self.key.dag_id, "run_id": self.key.run_id,
                "task_id": self.ti_task_id, "map_index": self.key.map_index, "try_number": self.try_number,
                "request_id": self.try_id, "retried": self.retried, "message": self.message}

    @classmethod
    def from_payload(cls, payload: object) -> TaskCallbackRequest:
        fields = _fields(payload, TASK_KIND, ("dag_id", "run_id", "task_id", "request_id"))
        message = fields.get("message", "")
        if not isinstance(message, str):
            raise ValueError("callback payload field 'message' must be a string")
        key = TIKey(fields["dag_id"], fields["run_id"], fields["task_id"], _int(fields, "map_index", UNMAPPED))
        return cls.for_try(key, _int(fields, "try_number", 0), request_id=fields["request_id"],
                           retried=_bool(fields, "retried"), message=message)


CallbackRequest = DagCallbackRequest | TaskCallbackRequest


def callback_request_from_payload(payload: object) -> CallbackRequest | None:
    """The callback request ``payload`` carries; None when it is not one (a try's dispatch)."""
    kind = payload.get("kind") if isinstance(payload, dict) else None
    if kind == DAG_KIND:
        return DagCallbackRequest.from_payload(payload)
    if kind == TASK_KIND:
        return TaskCallbackRequest.from_payload(payload)
    return None
