"""Local mode nudges the scheduler at a rescheduled sensor's next poke (and only for such a try)."""

from __future__ import annotations

import datetime as dt

from updraft.local.reschedule_wake import wake_at_reschedule
from updraft.model.records import TaskInstance
from updraft.model.states import TaskInstanceState

NOW = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
PAYLOAD = {"dag_id": "d", "run_id": "r", "task_id": "wait", "map_index": -1, "try_number": 1, "try_id": "x"}


class _Store:
    def __init__(self, ti):
        self.ti = ti

    def get_ti(self, key):
        assert key.task_id == "wait"
        return self.ti


def _wake(ti, *, stopping=False):
    timers, nudges = [], []
    due = wake_at_reschedule(_Store(ti), PAYLOAD, nudge=lambda: nudges.append(1), stopping=lambda: stopping,
                             now=NOW, timer=lambda delay, call: timers.append((delay, call)))
    for _, call in timers:
        call()
    return due, [delay for delay, _ in timers], nudges


def test_a_rescheduled_try_wakes_the_scheduler_at_its_next_poke():
    ti = TaskInstance("d", "r", "wait", state=TaskInstanceState.UP_FOR_RESCHEDULE,
                      next_retry_at=NOW + dt.timedelta(seconds=12))
    assert _wake(ti) == (NOW + dt.timedelta(seconds=12), [12.0], [1])
    assert _wake(ti, stopping=True)[2] == []  # local mode stopped meanwhile: nothing to wake


def test_other_outcomes_set_no_timer():
    done = TaskInstance("d", "r", "wait", state=TaskInstanceState.SUCCESS)
    assert _wake(done) == (None, [], [])
    assert _wake(None) == (None, [], [])
