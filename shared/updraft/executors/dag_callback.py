"""A request to run a DAG's success or failure callbacks on a worker (Airflow's ``DagCallbackRequest``).

The scheduler never imports user code, so when it ends a run whose DAG has ``on_success_callback`` or
``on_failure_callback`` it sends this through the same executors as a try (a Lambda async invoke or a Fargate
task): a ``Dispatch`` whose ``try_id`` is the request's deterministic id (so Fargate's ``clientToken`` and the
worker's fence see a duplicate as one) and whose key names the run's callback log, not a task. It always goes
to the Lambda executor (the default): callbacks are short notifications. The payload says
which callbacks (``success``), Airflow's ``reason`` ("success", "task_failure", "all_tasks_deadlocked",
"timed_out") and the task instance the context is built around (Airflow's ``last_ti``), if any.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from updraft.executors.base import Dispatch
from updraft.model.records import UNMAPPED, TIKey

KIND = "dag_callback"
# The task id of a run's callback log: "@" is not allowed in a task id, so it never names a real task's log.
CALLBACK_LOG_TASK_ID = "@dag_callbacks"


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
        return {"kind": KIND, "dag_id": self.key.dag_id, "run_id": self.key.run_id, "request_id": self.try_id,
                "success": self.success, "reason": self.reason, "ti_task_id": self.ti_task_id,
                "ti_map_index": self.ti_map_index}

    @classmethod
    def from_payload(cls, payload: object) -> DagCallbackRequest:
        """The inverse of ``to_payload``; ValueError naming the bad field for anything else."""
        if not isinstance(payload, dict) or payload.get("kind") != KIND:
            raise ValueError(f"a DAG callback payload is a JSON object with kind {KIND!r}")
        for name in ("dag_id", "run_id", "request_id", "reason"):
            if not isinstance(payload.get(name), str) or not payload[name]:
                raise ValueError(f"DAG callback payload field {name!r} must be a non-empty string")
        if not isinstance(payload.get("success"), bool):
            raise ValueError("DAG callback payload field 'success' must be a boolean")
        task_id, map_index = payload.get("ti_task_id"), payload.get("ti_map_index", UNMAPPED)
        if task_id is not None and (not isinstance(task_id, str) or not task_id):
            raise ValueError("DAG callback payload field 'ti_task_id' must be a non-empty string or null")
        if not isinstance(map_index, int) or isinstance(map_index, bool):
            raise ValueError("DAG callback payload field 'ti_map_index' must be an integer")
        ti_key = TIKey(payload["dag_id"], payload["run_id"], task_id, map_index) if task_id else None
        return cls.for_run(payload["dag_id"], payload["run_id"], request_id=payload["request_id"],
                           success=payload["success"], reason=payload["reason"], ti_key=ti_key)


def is_dag_callback_payload(payload: object) -> bool:
    return isinstance(payload, dict) and payload.get("kind") == KIND
