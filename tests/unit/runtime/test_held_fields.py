"""A try's rendered fields held by its worker: carried by the end, or written once when the try runs long."""

from __future__ import annotations

import datetime as dt
import threading
import time
from typing import Any

import pytest

from updraft.executors.base import Dispatch
from updraft.model.records import TIKey
from updraft.runtime.rendered_fields import HeldFields
from updraft.runtime.stopping import WorkerStopped
from updraft.runtime.supervisor import TaskSupervisor

KEY = TIKey("d", "r", "t")


class Store:
    """Records ``set_rendered_fields``; ``gate`` (when set) holds a write until released, ``fail`` raises."""

    def __init__(self, gate: threading.Event | None = None, fail: bool = False) -> None:
        self.writes: list[dict[str, Any]] = []
        self.gate = gate
        self.fail = fail
        self.entered = threading.Event()

    def set_rendered_fields(self, key: TIKey, *, try_id: str, rendered_fields: dict[str, Any]) -> bool:
        assert key == KEY and try_id == "try-1"
        self.entered.set()
        if self.gate is not None:
            assert self.gate.wait(5)
        if self.fail:
            raise ConnectionError("throttled")
        self.writes.append(rendered_fields)
        return True


def _until(predicate: Any, within: float = 5.0) -> None:
    deadline = time.monotonic() + within
    while not predicate():
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_a_try_that_ends_within_the_hold_has_its_fields_taken_by_the_end_and_never_written() -> None:
    store = Store()
    held = HeldFields(store, KEY, "try-1", hold_s=0.2)  # type: ignore[arg-type]
    held.hold({"bash_command": "echo 1"})
    assert held.take() == {"bash_command": "echo 1"}
    time.sleep(0.4)  # past the hold: the timer was cancelled
    assert store.writes == []
    assert held.take() is None


def test_a_try_that_runs_past_the_hold_has_its_fields_written_once_and_the_end_carries_nothing() -> None:
    store = Store()
    held = HeldFields(store, KEY, "try-1", hold_s=0.05)  # type: ignore[arg-type]
    held.hold({"bash_command": "echo 1"})
    _until(lambda: store.writes)
    assert held.take() is None
    held.write()  # a later write (the worker's error path) has nothing to write
    assert store.writes == [{"bash_command": "echo 1"}]


def test_the_end_waits_for_a_write_in_flight_so_the_end_never_lands_first() -> None:
    gate = threading.Event()
    store = Store(gate)
    held = HeldFields(store, KEY, "try-1", hold_s=0.0)  # type: ignore[arg-type]
    held.hold({"f": "v"})
    assert store.entered.wait(5)  # the own write is in flight
    taken: list[Any] = []
    end = threading.Thread(target=lambda: taken.append(held.take()))
    end.start()
    end.join(0.2)
    assert end.is_alive()  # the end waits for it
    gate.set()
    end.join(5)
    assert taken == [None] and store.writes == [{"f": "v"}]


def test_a_failed_write_leaves_the_fields_for_the_end_to_carry() -> None:
    store = Store(fail=True)
    held = HeldFields(store, KEY, "try-1", hold_s=0.0)  # type: ignore[arg-type]
    held.hold({"f": "v"})
    assert store.entered.wait(5)
    _until(lambda: held._timer is not None and not held._timer.is_alive())
    assert held.take() == {"f": "v"}


def _dispatch(try_number: int) -> Dispatch:
    return Dispatch(key=KEY, try_number=try_number, try_id="try-1")


def test_the_supervisor_hands_the_fields_to_the_end_and_writes_them_when_the_try_ends_another_way(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def ran(self: Any, job: Any, store: Any, scope: Any, *rest: Any) -> Any:
        assert scope.rendered is not None
        scope.rendered.hold({"f": "v"})  # what the child's set_rendered_fields call does through the proxy
        if job["dispatch"]["try_number"] == 2:
            raise WorkerStopped("ECS stopped the worker")
        return {"state": "success"}

    monkeypatch.setattr(TaskSupervisor, "_exchange", ran)
    store = Store()
    supervisor = TaskSupervisor()
    common: dict[str, Any] = dict(store=store, dags_folder="/dags", plugins_folder=None,
                                  now_fn=lambda: dt.datetime.now(dt.UTC), log_sink=None, hostname=None, run=None,
                                  credentials=None)
    result = supervisor.run(_dispatch(1), **common)
    assert result.rendered_fields == {"f": "v"} and store.writes == []  # the end's write carries them
    with pytest.raises(WorkerStopped):
        supervisor.run(_dispatch(2), **common)
    assert store.writes == [{"f": "v"}]  # written before the stop went on
