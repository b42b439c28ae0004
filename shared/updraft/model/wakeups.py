"""A wake-up: the scheduler called at a due moment (a scheduled run's ``run_after``, a retry's ``next_retry_at``)
instead of at the next tick, as an execution of the deferral state machine (kind ``wake``: a Wait to the moment,
then an asynchronous invoke of the worker with ``schedule``, the request below).

Names are deterministic, one per due moment: a repeated start (another scheduler, the tick arming what falls due
before its next pass) is the same execution, never a second wake. They end with ``-r<...>`` as a next-poke wake's
do, so the deferral sweep leaves them alone (``scheduling.wait_sweep``). At most 80 characters of
``[A-Za-z0-9_-]``, as Step Functions requires.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
from typing import Any

from updraft.model.deferrals import SCHEDULE_RUN_EVENT, execution_name, sfn_timestamp
from updraft.model.records import TIKey

WAKE_KIND = "wake"  # the state machine input's kind: a Wait to ``resume_at``, then the worker gets ``schedule``
RUN_DUE_EVENT = "run_due"  # the worker payload's kind: create the DAG's due runs now and schedule them


def run_due_execution_name(dag_id: str, due: dt.datetime) -> str:
    """The wake for ``dag_id``'s scheduled run due at ``due``: one per DAG and moment."""
    digest = hashlib.sha256(dag_id.encode()).hexdigest()[:24]
    return f"{digest}-{due.astimezone(dt.UTC):%Y%m%dT%H%M%S}-rdue"


def retry_execution_name(key: TIKey, try_number: int, try_id: str) -> str:
    """The wake for the retry of try ``try_id`` (unique per try: a cleared instance that fails again under the same
    try number gets a wake of its own)."""
    return execution_name(key, try_number, f"rt{try_id}")


def wake_input(due: dt.datetime, request: dict[str, Any]) -> dict[str, Any]:
    """The execution's input: wait until ``due`` (rounded up to the second: never early), then send ``request``."""
    return {"kind": WAKE_KIND, "resume_at": sfn_timestamp(due), "schedule": request}


def run_due_payload(dag_id: str, due: dt.datetime) -> dict[str, Any]:
    """The worker payload of a run-due wake (``due`` is informative: the scheduler decides on its own clock)."""
    return {"kind": RUN_DUE_EVENT, "dag_id": dag_id, "due": due.astimezone(dt.UTC).isoformat()}


def schedule_run_payload(dag_id: str, run_id: str) -> dict[str, Any]:
    """The worker payload that schedules one run (``ScheduleRunRequest``): a retry's wake."""
    return {"kind": SCHEDULE_RUN_EVENT, "dag_id": dag_id, "run_id": run_id}


@dataclasses.dataclass(frozen=True)
class RunDueRequest:
    """The worker invoke a run-due wake sends: create ``dag_id``'s due scheduled runs now and schedule them."""

    dag_id: str

    @classmethod
    def from_payload(cls, payload: object) -> RunDueRequest | None:
        """The request ``payload`` is (None: it is not one); ValueError naming a bad field."""
        if not isinstance(payload, dict) or payload.get("kind") != RUN_DUE_EVENT:
            return None
        if not isinstance(payload.get("dag_id"), str) or not payload["dag_id"]:
            raise ValueError("run_due payload field 'dag_id' must be a non-empty string")
        return cls(payload["dag_id"])
