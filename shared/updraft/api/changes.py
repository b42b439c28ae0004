"""What the mutating run and task-instance routes share: the enum checks Airflow's bodies make, the
features Updraft refuses by name, and the scheduler nudge after a change (so cleared tasks start now rather than
at the next tick)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from updraft.api.errors import BadRequest, Unprocessable, issue
from updraft.api.routing import Call

log = logging.getLogger(__name__)

NOTE_LENGTH = 1000  # Airflow's note column


def check_enum(body: dict[str, Any], name: str, allowed: Iterable[str]) -> None:
    """A 422 as pydantic words it when ``body[name]`` is not one of ``allowed`` (None passes)."""
    value = body.get(name)
    choices = list(allowed)
    if value is not None and value not in choices:
        expected = ", ".join(f"'{c}'" for c in choices[:-1]) + f" or '{choices[-1]}'"
        raise Unprocessable([issue("enum", ("body", name), f"Input should be {expected}", value)])


def refuse(body: dict[str, Any], unsupported: dict[str, str]) -> None:
    """A 400 naming each option Updraft does not honour that the body turns on (``name -> why``)."""
    named = [f"{name} ({why})" for name, why in unsupported.items() if body.get(name)]
    if named:
        raise BadRequest(f"Updraft does not support {', '.join(named)}")


def nudge(call: Call, dag_id: str, run_ids: Iterable[str]) -> None:
    """Ask the scheduler to look at the changed runs now; only a speed-up (the next tick does it anyway)."""
    for run_id in sorted(set(run_ids)):
        try:
            call.services.nudge_scheduler(dag_id, run_id)
        except Exception:
            log.warning("could not nudge the scheduler for %s/%s", dag_id, run_id, exc_info=True)
