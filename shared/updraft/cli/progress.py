"""Following a run until it finishes: the live display of ``dags trigger --wait``.

It polls the run and its task instances (through the environment's API: :class:`ApiRunSource`; anything with
the store's ``get_run``/``get_run_tis`` will do) and reports each task instance's state change. On a terminal
one summary line is redrawn in place, with failures kept above it; in a pipe or a log every change is its own
line, which is what a CI log wants.
"""

from __future__ import annotations

import collections
import sys
import time
from dataclasses import dataclass
from typing import Any, Protocol, TextIO

from updraft.cli.api_client import ApiCallFailed, ApiClient, path_of
from updraft.cli.options import clock
from updraft.model.records import TIKey
from updraft.model.states import (
    FAILED_TI_STATES,
    FAILED_TRY_STATES,
    FINISHED_RUN_STATES,
    DagRunState,
    TaskInstanceState,
)

_KEPT = FAILED_TI_STATES | FAILED_TRY_STATES  # a terminal's lines kept (not overwritten): the failures


def change_line(label: str, state: str, try_number: int) -> str:
    """One task state change, as ``dags test`` and ``dags trigger --wait`` print it."""
    return f"{clock()}  {label:<40} {state}" + (f" (try {try_number})" if try_number else "")


@dataclass(frozen=True)
class RunView:
    """What following a run needs of it."""

    dag_id: str
    run_id: str
    state: DagRunState


@dataclass(frozen=True)
class TaskView:
    key: TIKey
    state: TaskInstanceState | None
    try_number: int
    start_date: str | None


class RunSource(Protocol):
    def get_run(self, dag_id: str, run_id: str) -> Any: ...

    def get_run_tis(self, dag_id: str, run_id: str) -> list[Any]: ...


@dataclass(frozen=True)
class ApiRunSource:
    """A run and its task instances read through the environment's API."""

    client: ApiClient

    def get_run(self, dag_id: str, run_id: str) -> RunView | None:
        try:
            run = self.client.get(path_of("dags", dag_id, "dagRuns", run_id))
        except ApiCallFailed as err:
            if err.status == 404:
                return None
            raise
        return RunView(dag_id, run_id, DagRunState(run["state"]))

    def get_run_tis(self, dag_id: str, run_id: str) -> list[TaskView]:
        path = path_of("dags", dag_id, "dagRuns", run_id, "taskInstances")
        try:
            found = list(self.client.pages(path, "task_instances"))
        except ApiCallFailed as err:
            if err.status == 404:
                return []
            raise
        # Tasks the scheduler has not touched yet are listed without a state or a try: nothing happened to them.
        return [TaskView(TIKey(dag_id, run_id, ti["task_id"], ti["map_index"]),
                         TaskInstanceState(ti["state"]) if ti["state"] else None, ti["try_number"], ti["start_date"])
                for ti in found if ti["state"] is not None or ti["try_number"]]


class WaitTimeout(TimeoutError):
    """The run was still going when the caller stopped waiting (the run itself goes on)."""


def wait_for_run(store: RunSource, dag_id: str, run_id: str, *, stream: TextIO | None = None,
                 tty: bool | None = None, poll_interval: float = 0.5, timeout: float | None = None) -> Any:
    """Report task state changes until the run succeeds or fails; returns the finished run (None: deleted).

    Raises WaitTimeout after ``timeout`` seconds (None: wait as long as it takes).
    """
    stream = stream or sys.stdout
    tty = stream.isatty() if tty is None else tty
    started = time.monotonic()
    seen: dict[str, tuple[str, int]] = {}
    while True:
        run = store.get_run(dag_id, run_id)
        tis = store.get_run_tis(dag_id, run_id)
        for ti in sorted(tis, key=lambda t: (t.start_date is None, str(t.start_date or ""), t.key.label)):
            now = (ti.state.value if ti.state else "none", ti.try_number)
            if seen.get(ti.key.label) == now:
                continue
            seen[ti.key.label] = now
            if not tty:
                stream.write(change_line(ti.key.label, *now) + "\n")
            elif ti.state in _KEPT:
                stream.write("\r\033[K" + change_line(ti.key.label, *now) + "\n")
        if tty and run is not None:  # a run deleted meanwhile has no summary; the caller reports it
            stream.write("\r\033[K" + _summary(run, seen, time.monotonic() - started))
        stream.flush()
        if run is None or run.state in FINISHED_RUN_STATES:
            if tty:
                stream.write("\n")
            return run
        if timeout is not None and time.monotonic() - started > timeout:
            if tty:
                stream.write("\n")
            raise WaitTimeout(f"run {run_id} of {dag_id} is still {run.state.value} after {timeout:g} s")
        time.sleep(poll_interval)


def _summary(run: Any, seen: dict[str, tuple[str, int]], elapsed: float) -> str:
    counts = collections.Counter(state for state, _ in seen.values())
    parts = ", ".join(f"{state} {n}" for state, n in sorted(counts.items()))
    return f"{run.run_id}: {run.state.value}  [{parts or 'no task started'}]  {elapsed:.1f}s"
