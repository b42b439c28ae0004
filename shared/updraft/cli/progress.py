"""Following a run until it finishes: the live display of ``dags trigger --wait``.

It polls the store (strongly consistent reads, so no change is missed between polls) and reports each task
instance's state change. On a terminal one summary line is redrawn in place, with failures kept above it; in a
pipe or a log every change is its own line, which is what a CI log wants.
"""

from __future__ import annotations

import collections
import sys
import time
from typing import TYPE_CHECKING, TextIO

from updraft.cli.options import clock
from updraft.model.states import FINISHED_RUN_STATES, TaskInstanceState

if TYPE_CHECKING:
    from updraft.model.records import DagRun
    from updraft.store.dynamo import DynamoStore

_KEPT = {TaskInstanceState.FAILED, TaskInstanceState.UP_FOR_RETRY, TaskInstanceState.UPSTREAM_FAILED}


def change_line(label: str, state: str, try_number: int) -> str:
    """One task state change, as ``dags test`` and ``dags trigger --wait`` print it."""
    return f"{clock()}  {label:<40} {state}" + (f" (try {try_number})" if try_number else "")


class WaitTimeout(TimeoutError):
    """The run was still going when the caller stopped waiting (the run itself goes on)."""


def wait_for_run(store: DynamoStore, dag_id: str, run_id: str, *, stream: TextIO | None = None,
                 tty: bool | None = None, poll_interval: float = 0.5, timeout: float | None = None) -> DagRun | None:
    """Report task state changes until the run succeeds or fails; returns the finished DagRun (None: deleted).

    Raises WaitTimeout after ``timeout`` seconds (None: wait as long as it takes).
    """
    stream = stream or sys.stdout
    tty = stream.isatty() if tty is None else tty
    started = time.monotonic()
    seen: dict[str, tuple[str, int]] = {}
    while True:
        run = store.get_run(dag_id, run_id)
        tis = store.get_run_tis(dag_id, run_id)
        for ti in sorted(tis, key=lambda t: (t.start_date is None, t.start_date or 0, t.key.label)):
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


def _summary(run: DagRun, seen: dict[str, tuple[str, int]], elapsed: float) -> str:
    counts = collections.Counter(state for state, _ in seen.values())
    parts = ", ".join(f"{state} {n}" for state, n in sorted(counts.items()))
    return f"{run.run_id}: {run.state.value}  [{parts or 'no task started'}]  {elapsed:.1f}s"
