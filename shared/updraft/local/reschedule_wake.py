"""Local mode looks at a run again when a reschedule-mode sensor's next poke is due, not at the next tick.

On AWS the EventBridge tick (a minute) claims a rescheduled sensor once its reschedule date has passed, as it does
a retry. Locally the tick is seconds long, and a sensor that asks to be poked again in 10 s should be poked at 10 s:
when a worker reports a try ``up_for_reschedule``, a timer nudges the scheduler for that run at the reschedule
date (a nudge before it changes nothing; the tick remains the backstop if a timer is lost).
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable
from typing import Any

from updraft.model.records import TIKey
from updraft.model.states import TaskInstanceState

Timer = Callable[[float, Callable[[], None]], None]


def start_daemon_timer(delay_s: float, call: Callable[[], None]) -> None:
    timer = threading.Timer(delay_s, call)
    timer.daemon = True  # never keeps local mode from stopping
    timer.start()


def wake_at_reschedule(store: Any, payload: dict[str, Any], *, nudge: Callable[[], None],
                       stopping: Callable[[], bool], now: dt.datetime,
                       timer: Timer = start_daemon_timer) -> dt.datetime | None:
    """If the reported try is waiting for its next poke, call ``nudge`` at its reschedule date; returns that date
    (None: the try is not waiting for a reschedule)."""
    key = TIKey(payload["dag_id"], payload["run_id"], payload["task_id"], int(payload.get("map_index", -1)))
    ti = store.get_ti(key)
    if ti is None or ti.state != TaskInstanceState.UP_FOR_RESCHEDULE or ti.next_retry_at is None:
        return None
    due: dt.datetime = ti.next_retry_at

    def fire() -> None:
        if not stopping():
            nudge()

    timer(max((due - now).total_seconds(), 0.0), fire)
    return due
