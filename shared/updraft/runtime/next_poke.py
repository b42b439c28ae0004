"""A reschedule-mode sensor's next poke comes at its date, not at the next tick.

When a try ends ``up_for_reschedule``, its worker starts an execution of the deferral state machine (kind
``reschedule``: ``updraft.triggers.state_machine``) that waits until the reschedule date and then invokes the
worker with a ``ScheduleRunRequest`` for the sensor's run, which claims the next poke at once (Airflow's reschedule
dep is met from that second). Local mode's engine plays the same execution. The name is one per poke, so a
repeated start is harmless; a wake for a sensor that was cleared or marked meanwhile only schedules its run once
more, and a lost one leaves the tick (one minute on AWS) as the backstop. No worker and no slot is held between pokes.
"""

from __future__ import annotations

import datetime as dt
import logging

from updraft.model.deferrals import reschedule_execution_name, reschedule_input
from updraft.model.records import TIKey
from updraft.scheduling import Waits

log = logging.getLogger(__name__)


def wake_at_next_poke(waits: Waits | None, key: TIKey, try_number: int, reschedule_count: int,
                      due: dt.datetime | None) -> str | None:
    """Start the execution that schedules ``key``'s run at ``due``; its name (None: no engine, or no date). Never
    raises: the tick still claims the poke if the start fails."""
    if waits is None or due is None:
        return None
    name = reschedule_execution_name(key, try_number, reschedule_count)
    try:
        waits.start(name, reschedule_input(key, due))
    except Exception:
        log.warning("could not start the next-poke wake of %s; the tick will claim it", key.label, exc_info=True)
        return None
    return name
