"""Local mode's polling loops back off while idle: the pause policy, and what the queue pump and the run watcher
report as work found."""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any

from updraft.local.dag_events import DagEventPump
from updraft.local.run_watch import RunWatcher
from updraft.local.system import next_pause
from updraft.model.states import DagRunState


def test_an_idle_loop_doubles_its_pause_up_to_the_limit_and_work_or_a_wake_resets_it() -> None:
    pauses = [0.2]
    for _ in range(5):
        pauses.append(next_pause(pauses[-1], 0.2, 1.0, found=False, woken=False))
    assert pauses == [0.2, 0.4, 0.8, 1.0, 1.0, 1.0]
    assert next_pause(1.0, 0.2, 1.0, found=True, woken=False) == 0.2
    assert next_pause(1.0, 0.2, 1.0, found=False, woken=True) == 0.2
    assert next_pause(1.0, 0.2, 1.0, found=None, woken=False) == 0.2  # a failed step
    assert next_pause(0.5, 0.5, None, found=False, woken=False) == 0.5  # a loop without idle_every never backs off


class _Queue:
    def __init__(self, batches: list[list[dict[str, Any]]]) -> None:
        self.batches = batches

    def receive_message(self, **_: Any) -> dict[str, Any]:
        return {"Messages": self.batches.pop(0)} if self.batches else {}


def _pump(queue: _Queue) -> DagEventPump:
    store = SimpleNamespace(list_dags=lambda include_inactive: [])
    services = SimpleNamespace(store=store, client=lambda name: queue)
    return DagEventPump(services=services, queue_url="q", names=SimpleNamespace(), parse=lambda body: {},
                        say=lambda line: None, stop=threading.Event(), unpause_new_dags=False)


def test_the_pump_reports_work_while_messages_come_or_parses_are_under_way() -> None:
    assert _pump(_Queue([])).pump() is False
    busy = _pump(_Queue([[{"MessageId": "m", "Body": "{}", "ReceiptHandle": "r"}]]))
    gate = threading.Event()
    busy._handle = lambda message: gate.wait(5)  # type: ignore[method-assign]  # a parse still under way
    assert busy.pump() is True
    busy._in_flight.add("m")  # as _handle keeps it until its parse is done
    assert busy.pump() is True
    busy._in_flight.clear()
    gate.set()
    assert busy.pump() is False
    busy.close()


def test_the_run_watcher_reports_work_until_the_end_of_every_run_it_saw_is_said() -> None:
    run = SimpleNamespace(dag_id="d", run_id="r", state=DagRunState.RUNNING, start_date=None, end_date=None)
    active = [run]
    said: list[str] = []
    store = SimpleNamespace(active_runs=lambda: list(active),
                            get_run=lambda dag_id, run_id: SimpleNamespace(**{**vars(run),
                                                                              "state": DagRunState.SUCCESS}))
    watcher = RunWatcher(store, said.append)
    assert watcher.poll() is True
    active.clear()
    assert watcher.poll() is False  # its end said in this poll
    assert said == ["run d r running", "run d r success"]
    assert watcher.poll() is False
