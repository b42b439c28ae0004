"""A deferred try's wait, as the task instance records it (Airflow's ``trigger`` row, ``next_method``/``next_kwargs``
and ``trigger_timeout``) and as its Step Functions execution is started.

Updraft's triggers are pure waits whose end is known when the task defers (a time trigger fires at its moment):
the wait ends at ``resume_at``, the earlier of the trigger's moment and the deferral's timeout, and ``times_out``
says which. So the execution's input and the resume it sends carry only the try's identity and token, and the
resumed try reads everything else from its record.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
from typing import Any

from updraft.model.records import TaskInstance, TIKey

WAIT_KIND = "wait"  # a Wait state to ``resume_at``, then the resume invoke: no compute while it waits
POLL_KIND = "poll"  # a check Lambda in a Wait/Choice loop (triggers that must look at something)
RESCHEDULE_KIND = "reschedule"  # a reschedule-mode sensor's next poke: a Wait to it, then its run is scheduled
RESUME_EVENT = "resume_deferred"  # the worker payload's ``kind`` for a resume
SCHEDULE_RUN_EVENT = "schedule_run"  # the worker payload's ``kind`` for a next-poke wake
TRIGGER_FAIL_REPR = "__fail__"  # Airflow's next_method of a try resumed only to fail
TRIGGER_TIMEOUT = "Trigger timeout"  # Airflow's TriggerFailureReason.TRIGGER_TIMEOUT
TRIGGER_FAILURE = "Trigger failure"  # Airflow's TriggerFailureReason.TRIGGER_FAILURE


@dataclasses.dataclass(frozen=True)
class Deferral:
    """What a try deferred to: the trigger (serialized as Airflow serializes it) and where it resumes."""

    classpath: str
    kwargs: dict[str, Any]  # the trigger's keyword arguments, JSON (datetimes tagged as XCom values are)
    next_method: str | None  # None: the trigger ends the task (end_from_trigger)
    next_kwargs: dict[str, Any] | None  # JSON, like kwargs
    resume_at: dt.datetime
    times_out: bool  # the deferral's timeout comes before the trigger fires: the try fails at resume_at
    event: Any = None  # the payload the trigger fires with (JSON), given to next_method as ``event``
    end_from_trigger: bool = False
    kind: str = WAIT_KIND
    created_at: dt.datetime | None = None
    timeout_at: dt.datetime | None = None
    # A polling wait of a sensor with ``exponential_backoff``: the interval between looks doubles, up to max_wait.
    exponential_backoff: bool = False
    max_wait_s: float | None = None

    def to_record(self) -> dict[str, Any]:
        """The ``trigger`` attribute of the deferred task instance (next_method/next_kwargs are their own)."""
        return {"classpath": self.classpath, "kwargs": self.kwargs, "kind": self.kind,
                "resume_at": self.resume_at.isoformat(), "times_out": self.times_out, "event": self.event,
                "end_from_trigger": self.end_from_trigger,
                "created_at": self.created_at.isoformat() if self.created_at else None,
                "timeout_at": self.timeout_at.isoformat() if self.timeout_at else None,
                "exponential_backoff": self.exponential_backoff, "max_wait_s": self.max_wait_s}


def resume_at(ti: TaskInstance) -> dt.datetime | None:
    """When a deferred try's wait ends (None: it records no wait)."""
    value = (ti.trigger or {}).get("resume_at")
    return dt.datetime.fromisoformat(value) if isinstance(value, str) else None


def execution_name(key: TIKey, try_number: int, try_id: str) -> str:
    """The Step Functions execution of one deferral: deterministic (a repeated start is ExecutionAlreadyExists)
    and unique per deferral (a resumed try that defers again has a new try_id). At most 80 characters of
    [A-Za-z0-9_-], as Step Functions requires, so the key is hashed."""
    digest = hashlib.sha256("\x1f".join((key.dag_id, key.run_id, key.task_id, str(key.map_index))).encode())
    return f"{digest.hexdigest()[:24]}-{try_number}-{try_id}"[:80]


def reschedule_execution_name(key: TIKey, try_number: int, reschedule_count: int) -> str:
    """The execution that wakes the scheduler at a reschedule-mode sensor's next poke: one per poke (a repeated
    start is ExecutionAlreadyExists), never the name of a deferral's execution."""
    return execution_name(key, try_number, f"r{reschedule_count}")


def reschedule_input(key: TIKey, due: dt.datetime) -> dict[str, Any]:
    """The execution's input for a sensor's next poke: wait until ``due``, then have the worker schedule the
    sensor's run (``ScheduleRunRequest``)."""
    return {"kind": RESCHEDULE_KIND, "resume_at": sfn_timestamp(due),
            "schedule": {"kind": SCHEDULE_RUN_EVENT, "dag_id": key.dag_id, "run_id": key.run_id}}


def resume_payload(key: TIKey, try_number: int, try_id: str) -> dict[str, Any]:
    """What the execution sends the worker when the wait ends."""
    return {"kind": RESUME_EVENT, "dag_id": key.dag_id, "run_id": key.run_id, "task_id": key.task_id,
            "map_index": key.map_index, "try_number": try_number, "try_id": try_id}


def execution_input(ti: TaskInstance) -> dict[str, Any]:
    """The execution's input for a deferred try (the state machine's contract: ``kind``, ``resume_at``,
    ``resume``)."""
    record = ti.trigger or {}
    if ti.try_id is None:
        raise ValueError(f"{ti.key.label} has no try to resume")
    return {"kind": record.get("kind", WAIT_KIND), "resume_at": sfn_timestamp(resume_at(ti)),
            "resume": resume_payload(ti.key, ti.try_number, ti.try_id)}


def sfn_timestamp(value: dt.datetime | None) -> str:
    """Step Functions' Wait ``TimestampPath`` wants RFC 3339 with a ``Z`` (no offset form, no microseconds)."""
    if value is None:
        raise ValueError("a wait needs its resume time")
    value = value.astimezone(dt.UTC)
    if value.microsecond:  # never wake before the moment: round up to the next second
        value = value.replace(microsecond=0) + dt.timedelta(seconds=1)
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclasses.dataclass(frozen=True)
class ResumeRequest:
    """The worker invoke a wait's end sends (``resume_payload``): resume this deferred try, fenced by its token."""

    key: TIKey
    try_number: int
    try_id: str

    @classmethod
    def from_payload(cls, payload: object) -> ResumeRequest | None:
        """The request ``payload`` is (None: it is not a resume); ValueError naming a bad field."""
        if not isinstance(payload, dict) or payload.get("kind") != RESUME_EVENT:
            return None
        for name in ("dag_id", "run_id", "task_id", "try_id"):
            if not isinstance(payload.get(name), str) or not payload[name]:
                raise ValueError(f"resume payload field {name!r} must be a non-empty string")
        for name in ("map_index", "try_number"):
            if not isinstance(payload.get(name), int) or isinstance(payload.get(name), bool):
                raise ValueError(f"resume payload field {name!r} must be an integer")
        key = TIKey(payload["dag_id"], payload["run_id"], payload["task_id"], payload["map_index"])
        return cls(key, payload["try_number"], payload["try_id"])


@dataclasses.dataclass(frozen=True)
class ScheduleRunRequest:
    """The worker invoke a next-poke wake sends: schedule this run now (the sensor's poke is due)."""

    dag_id: str
    run_id: str

    @classmethod
    def from_payload(cls, payload: object) -> ScheduleRunRequest | None:
        """The request ``payload`` is (None: it is not one); ValueError naming a bad field."""
        if not isinstance(payload, dict) or payload.get("kind") != SCHEDULE_RUN_EVENT:
            return None
        for name in ("dag_id", "run_id"):
            if not isinstance(payload.get(name), str) or not payload[name]:
                raise ValueError(f"schedule_run payload field {name!r} must be a non-empty string")
        return cls(payload["dag_id"], payload["run_id"])
