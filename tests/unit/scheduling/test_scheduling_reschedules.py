"""A reschedule-mode sensor's next poke continues its try; every other way back to a claim starts a new one."""

from __future__ import annotations

import dataclasses
import datetime as dt

from updraft.model.records import TaskInstance
from updraft.model.states import TaskInstanceState
from updraft.scheduling.claims import continues_try
from updraft.scheduling.decisions.backstops import QUEUED_TIMEOUT, backstop_change

NOW = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
TI = TaskInstanceState


def _waiting() -> TaskInstance:
    """Poked once (try 1, poke id ``a``), now scheduled for its next poke."""
    return TaskInstance("d", "r", "wait", state=TI.SCHEDULED, try_number=1, try_id="a", reschedule_count=1,
                        first_reschedule_date=NOW, rescheduled_try_id="a")


def test_only_the_poke_that_asked_for_it_is_continued():
    assert continues_try(_waiting())
    assert not continues_try(dataclasses.replace(_waiting(), try_id=None))  # cleared: the try id is removed
    assert not continues_try(dataclasses.replace(_waiting(), try_id="b", state=TI.UP_FOR_RETRY))  # a poke died
    assert not continues_try(TaskInstance("d", "r", "wait", state=TI.SCHEDULED, try_number=1, try_id="a"))


def test_a_poke_stuck_in_the_queue_goes_back_as_the_same_try():
    stuck = dataclasses.replace(_waiting(), state=TI.QUEUED, try_id="b", queued_at=NOW - QUEUED_TIMEOUT * 2)
    change = backstop_change(None, stuck, NOW, logical_date=None)  # type: ignore[arg-type]
    assert change is not None and change.state == TI.SCHEDULED and change.expected_try_id == "b"
    assert (change.fields["try_number"], change.fields["try_id"]) == (1, "a")
    assert continues_try(dataclasses.replace(stuck, state=TI.SCHEDULED, **change.fields))
    fresh = dataclasses.replace(stuck, reschedule_count=0, rescheduled_try_id=None)  # a first poke: number back
    assert backstop_change(None, fresh, NOW, logical_date=None).fields["try_number"] == 0  # type: ignore[arg-type,union-attr]
