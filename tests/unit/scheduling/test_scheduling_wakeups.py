"""Wake-ups' names and starts (``model.wakeups``, ``scheduling.wakeups``): one execution per due moment, valid for
Step Functions, never an error on the way that starts them, and left alone by the deferral sweep."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from updraft.model.records import TaskInstance, TIKey
from updraft.model.states import TaskInstanceState
from updraft.model.wakeups import RunDueRequest, retry_execution_name, run_due_execution_name
from updraft.scheduling.wait_sweep import sweep_waits
from updraft.scheduling.wakeups import wake_for_next_run, wake_for_retry

NOW = dt.datetime(2026, 12, 2, 12, 0, 30, tzinfo=dt.UTC)
VALID = re.compile(r"^[A-Za-z0-9_-]{1,80}$")


class RecordingWaits:
    def __init__(self, fail: bool = False) -> None:
        self.started: dict[str, dict[str, Any]] = {}
        self.stopped: list[str] = []
        self.fail = fail

    def start(self, name: str, execution_input: dict[str, Any]) -> None:
        if self.fail:
            raise RuntimeError("throttled")
        self.started[name] = execution_input

    def stop(self, name: str) -> None:
        self.stopped.append(name)

    def running_executions(self) -> list[tuple[str, dt.datetime]]:
        return [(name, NOW - dt.timedelta(hours=1)) for name in self.started]

    def execution_status(self, name: str) -> str | None:
        return "RUNNING" if name in self.started else None


def test_a_run_due_wake_is_one_execution_per_dag_and_moment_waiting_to_the_second():
    waits = RecordingWaits()
    due = NOW + dt.timedelta(seconds=30)
    name = wake_for_next_run(waits, "a" * 250, due, now=NOW)
    assert name is not None and VALID.match(name)
    assert wake_for_next_run(waits, "a" * 250, due, now=NOW) == name  # the same execution, not a second
    assert run_due_execution_name("b", due) != name and run_due_execution_name("a" * 250, due + dt.timedelta(
        minutes=1)) != name
    assert waits.started[name] == {"kind": "wake", "resume_at": "2026-12-02T12:01:00Z",
                                   "schedule": {"kind": "run_due", "dag_id": "a" * 250, "due": due.isoformat()}}
    assert RunDueRequest.from_payload(waits.started[name]["schedule"]) == RunDueRequest("a" * 250)


def test_nothing_is_started_for_what_is_due_already_and_a_failed_start_is_not_raised():
    waits = RecordingWaits()
    assert wake_for_next_run(waits, "d", NOW, now=NOW) is None and not waits.started
    assert wake_for_next_run(waits, "d", None, now=NOW) is None
    assert wake_for_next_run(RecordingWaits(fail=True), "d", NOW + dt.timedelta(minutes=1), now=NOW) is None
    assert wake_for_next_run(None, "d", NOW + dt.timedelta(minutes=1), now=NOW) is None


def test_a_retry_wake_is_one_per_try_and_only_for_a_retry_still_to_come():
    key = TIKey("d", "r", "t")
    ti = TaskInstance(*key, state=TaskInstanceState.UP_FOR_RETRY, try_number=1, try_id="f" * 32,
                      next_retry_at=NOW + dt.timedelta(seconds=10))
    waits = RecordingWaits()
    name = wake_for_retry(waits, ti, now=NOW)
    assert name == retry_execution_name(key, 1, "f" * 32) and VALID.match(name)
    assert waits.started[name]["schedule"] == {"kind": "schedule_run", "dag_id": "d", "run_id": "r"}
    assert waits.started[name]["resume_at"] == "2026-12-02T12:00:40Z"
    assert retry_execution_name(key, 1, "e" * 32) != name  # a cleared instance failing again: a wake of its own
    assert wake_for_retry(waits, TaskInstance(*key, state=TaskInstanceState.FAILED, try_number=1, try_id="f" * 32,
                                              next_retry_at=NOW + dt.timedelta(seconds=10)), now=NOW) is None
    assert wake_for_retry(waits, TaskInstance(*key, state=TaskInstanceState.UP_FOR_RETRY, try_number=1,
                                              try_id="f" * 32, next_retry_at=NOW), now=NOW) is None


def test_the_deferral_sweep_leaves_wakes_running():
    waits = RecordingWaits()
    key = TIKey("d", "r", "t")
    wake_for_next_run(waits, "d", NOW + dt.timedelta(minutes=1), now=NOW)
    wake_for_retry(waits, TaskInstance(*key, state=TaskInstanceState.UP_FOR_RETRY, try_number=1, try_id="f" * 32,
                                       next_retry_at=NOW + dt.timedelta(minutes=1)), now=NOW)
    report = sweep_waits(store=None, waits=waits, runs=[], now=NOW)  # type: ignore[arg-type]
    assert len(waits.started) == 2 and not waits.stopped and not report.stopped
