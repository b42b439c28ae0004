"""The run record a Lambda dispatch carries, so the worker does not read it again.

The claimer has just read the run (the mini scheduler's batch read, a pass's read of the active runs); the worker
would otherwise read it once more after its fenced start. The run is carried as JSON beside the dispatch's identity
when it is small: at most ``RUN_PAYLOAD_MAX`` bytes (a run's ``conf`` is the user's and may be large: such a run is
left out and the worker reads it, as it does for Fargate dispatches, whose container overrides are bounded at 8 KB).
Why the claimer's copy is as good as the worker's read is said where the worker takes it
(``runtime.worker.run_for``).
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from updraft.model.records import DagRun
from updraft.model.states import DagRunState

RUN_PAYLOAD_MAX = 4096  # bytes of the encoded run; a Lambda async event may be 256 KB, most runs need ~300 B
_DATES = ("logical_date", "data_interval_start", "data_interval_end", "run_after", "queued_at", "start_date",
          "end_date", "partition_date")
_REQUIRED = ("run_type", "dag_hash", "state")
_OPTIONAL_TEXT = ("note", "partition_key", "triggered_by", "triggering_user_name", "ticket")
_FIELDS = frozenset((*_DATES, *_REQUIRED, *_OPTIONAL_TEXT, "conf", "ti_shards"))


def run_payload(run: DagRun) -> dict[str, Any] | None:
    """The run as JSON (its dag_id and run_id are the dispatch's own), or None when it is larger than
    ``RUN_PAYLOAD_MAX`` bytes, its conf is not JSON or a time has no offset (the worker then reads the run)."""
    if any((value := getattr(run, name)) is not None and value.tzinfo is None for name in _DATES):
        return None
    encoded: dict[str, Any] = {"run_type": str(run.run_type), "dag_hash": run.dag_hash,
                               "state": DagRunState(run.state).value}
    encoded.update({name: value.isoformat() for name in _DATES if (value := getattr(run, name)) is not None})
    encoded.update({name: value for name in _OPTIONAL_TEXT if (value := getattr(run, name)) is not None})
    if run.conf:
        encoded["conf"] = run.conf
    if run.ti_shards != 1:
        encoded["ti_shards"] = run.ti_shards
    try:
        size = len(json.dumps(encoded, separators=(",", ":")).encode())
    except (TypeError, ValueError):
        return None
    return encoded if size <= RUN_PAYLOAD_MAX else None


def run_from_payload(dag_id: str, run_id: str, payload: object) -> DagRun:
    """The inverse of ``run_payload``; ValueError naming the bad field for anything else."""
    if not isinstance(payload, dict):
        raise ValueError("dispatch payload field 'run' must be an object")
    if unknown := sorted(set(payload) - _FIELDS):
        raise ValueError(f"dispatch payload field 'run' has unknown fields {unknown}")
    for name in _REQUIRED:
        if not isinstance(payload.get(name), str) or not payload[name]:
            raise ValueError(f"dispatch payload field 'run.{name}' must be a non-empty string")
    for name in _OPTIONAL_TEXT:
        if not isinstance(payload.get(name, ""), str):
            raise ValueError(f"dispatch payload field 'run.{name}' must be a string")
    if not isinstance(payload.get("conf", {}), dict):
        raise ValueError("dispatch payload field 'run.conf' must be an object")
    shards = payload.get("ti_shards", 1)
    if not isinstance(shards, int) or isinstance(shards, bool) or shards < 1:
        raise ValueError("dispatch payload field 'run.ti_shards' must be a positive integer")
    try:
        state = DagRunState(payload["state"])
    except ValueError:
        raise ValueError(f"dispatch payload field 'run.state' is not a run state: {payload['state']!r}") from None
    run = DagRun(dag_id=dag_id, run_id=run_id, run_type=payload["run_type"], dag_hash=payload["dag_hash"],
                 state=state, conf=dict(payload.get("conf", {})), note=payload.get("note"),
                 partition_key=payload.get("partition_key"), triggered_by=payload.get("triggered_by"),
                 triggering_user_name=payload.get("triggering_user_name"), ticket=payload.get("ticket"),
                 ti_shards=shards)
    for name in _DATES:
        setattr(run, name, _date(payload, name))
    return run


def _date(payload: dict[str, Any], name: str) -> dt.datetime | None:
    value = payload.get(name)
    if value is None:
        return None
    try:
        parsed = dt.datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None:
        raise ValueError(f"dispatch payload field 'run.{name}' must be an ISO 8601 time with its offset")
    return parsed
