"""The executor interface the scheduler dispatches claimed task instances through."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from updraft.executors.choice import DEFAULT_EXECUTOR, executor_for
from updraft.executors.dispatch_run import run_from_payload, run_payload
from updraft.model.records import DagRun, TIKey


@dataclass(frozen=True)
class Dispatch:
    """Everything a worker needs to find and fence one try: identity, try number and token, placement."""

    key: TIKey
    try_number: int
    try_id: str
    executor: str = DEFAULT_EXECUTOR
    compute: dict[str, Any] = field(default_factory=dict)
    # The try was started on Lambda, stopped before Lambda's limit and handed to this executor (same try number):
    # its log so far is kept ahead of this part (``updraft.runtime.handoff``).
    handed_off: bool = False
    # The instance waited for slots before this claim (it carried a blocked reason), or its claim left others of
    # its run waiting: its run is likely to have instances waiting when the try ends, so the worker looks for one
    # to hand its slots to with its end (``waiting_claims.HandOver``). A hint: the look finds whether any waits.
    waited: bool = field(default=False, compare=False)
    # The run as the claimer read it, which a Lambda worker uses instead of reading it again (``dispatch_run``);
    # None: the worker reads it. Not part of the dispatch's identity.
    run: DagRun | None = field(default=None, compare=False, repr=False)

    def to_payload(self) -> dict[str, Any]:
        """The JSON a worker invocation carries (no code, no XCom values)."""
        payload = {"dag_id": self.key.dag_id, "run_id": self.key.run_id, "task_id": self.key.task_id,
                   "map_index": self.key.map_index, "try_number": self.try_number, "try_id": self.try_id,
                   "executor": self.executor, "compute": dict(self.compute)}
        if self.handed_off:
            payload["handed_off"] = True
        if self.waited:
            payload["waited"] = True
        return payload

    def lambda_payload(self) -> dict[str, Any]:
        """What the Lambda executor sends: ``to_payload`` and the run, when it is small (``dispatch_run``)."""
        payload = self.to_payload()
        if self.run is not None and (run := run_payload(self.run)) is not None:
            payload["run"] = run
        return payload

    @classmethod
    def from_payload(cls, payload: object) -> Dispatch:
        """The inverse of ``to_payload`` and ``lambda_payload``; ValueError naming the bad field for anything else
        (workers refuse it)."""
        if not isinstance(payload, dict):
            raise ValueError(f"a dispatch payload is a JSON object, got {type(payload).__name__}")
        for name in ("dag_id", "run_id", "task_id", "try_id"):
            if not isinstance(payload.get(name), str) or not payload[name]:
                raise ValueError(f"dispatch payload field {name!r} must be a non-empty string")
        for name in ("map_index", "try_number"):
            value = payload.get(name, -1 if name == "map_index" else None)
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError(f"dispatch payload field {name!r} must be an integer")
        compute = payload.get("compute") or {}
        if not isinstance(compute, dict):
            raise ValueError("dispatch payload field 'compute' must be an object")
        executor = executor_for(None, payload.get("executor"))
        if not isinstance(executor, str):
            raise ValueError("dispatch payload field 'executor' must be a string")
        handed_off, waited = payload.get("handed_off", False), payload.get("waited", False)
        if not isinstance(handed_off, bool) or not isinstance(waited, bool):
            raise ValueError("dispatch payload fields 'handed_off' and 'waited' must be booleans")
        key = TIKey(payload["dag_id"], payload["run_id"], payload["task_id"], payload.get("map_index", -1))
        run = run_from_payload(key.dag_id, key.run_id, payload["run"]) if "run" in payload else None
        return cls(key, payload["try_number"], payload["try_id"], executor=executor, compute=dict(compute),
                   handed_off=handed_off, waited=waited, run=run)


@dataclass(frozen=True)
class LostTry:
    """An executor's report that the process running a try ended without ending the try (Airflow's executor event
    of a task instance that still says queued or running: "killed externally"). ``reason`` says what the executor
    saw (a stop code, an exit code, an out-of-memory kill). Fenced by ``try_id``: a report about an older try of
    the same instance changes nothing."""

    dispatch: Dispatch
    reason: str


class Executor(Protocol):
    """An executor may also set ``dispatches_over_network = True``: its ``dispatch`` waits on a network call and is
    safe from several threads, so a claim pass sends its dispatches concurrently (``scheduling.pass_invokes``)."""

    def dispatch(self, items: list[Dispatch]) -> None:
        """Start the given tries. Delivery may duplicate a dispatch: workers are fenced by ``try_id``."""
