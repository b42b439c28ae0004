"""Tries local mode lost: their process was stopped (Ctrl-C) or died (a task killed its worker process).

Local mode does not decide their outcome itself; it expires the try's lease, fenced by its ``try_id``, and the
scheduler's backstops do what Airflow does with such tries (``scheduling.decisions.backstops``): a try that was running
is a zombie (up_for_retry if it has retries left, else failed), a try still waiting for a worker goes back to
scheduled without spending a retry. So the next scheduler pass, in this start or the next one, settles them.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from updraft.executors.base import Dispatch
from updraft.model.states import SLOT_HOLDING_STATES


def release_orphan(store: Any, payload: Any, *, now: dt.datetime) -> str | None:
    """Expire the lease of the try ``payload`` dispatched; returns its state then, or None if it had moved on."""
    try:
        dispatch = Dispatch.from_payload(payload)
    except ValueError:
        return None
    ti = store.get_ti(dispatch.key)
    if ti is None or ti.try_id != dispatch.try_id or ti.state not in SLOT_HOLDING_STATES:
        return None  # finished, or already taken over: nothing was lost
    expired = now - dt.timedelta(microseconds=1)
    if not store.heartbeat(dispatch.key, try_id=dispatch.try_id, lease_expires_at=expired):
        return None
    return str(ti.state.value)
