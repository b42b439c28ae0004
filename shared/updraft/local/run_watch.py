"""A line per run event in local mode's output: queued, running, and how each run finished."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from updraft.model.states import FINISHED_RUN_STATES


class RunWatcher:
    """Polls the store's active runs; a try's report also marks its run running (a run may be faster than a poll)."""

    def __init__(self, store: Any, say: Callable[[str], None]) -> None:
        self.store = store
        self.say = say
        self._states: dict[tuple[str, str], str] = {}
        self._lock = threading.Lock()

    def try_reported(self, dag_id: str, run_id: str) -> None:
        """A try of the run reported: its run gets its "running" line if the poll has not seen it yet."""
        key = (dag_id, run_id)
        with self._lock:
            if key not in self._states:
                self._states[key] = "running"
                self.say(f"run {dag_id} {run_id} running")

    def poll(self) -> bool:
        """Say what changed since the last poll; whether any run is active (or was, until its end is said)."""
        store = self.store
        active = {(run.dag_id, run.run_id): run for run in store.active_runs()}
        with self._lock:
            for key, run in active.items():
                state = str(run.state.value)
                if self._states.get(key) != state:
                    self._states[key] = state
                    self.say(f"run {run.dag_id} {run.run_id} {state}")
            gone = [k for k in self._states if k not in active]
        for key in gone:
            run = store.get_run(*key)
            if run is not None and run.state not in FINISHED_RUN_STATES:
                continue  # started after the query above: the next poll sees it
            with self._lock:
                self._states.pop(key, None)
            if run is not None:
                took = ""
                if run.end_date and run.start_date:
                    took = f" in {(run.end_date - run.start_date).total_seconds():.1f} s"
                self.say(f"run {run.dag_id} {run.run_id} {run.state.value}{took}")
        with self._lock:
            return bool(active or self._states)
