"""What a run's trace holds, recorded where the scheduler and the worker record Airflow's metrics.

One trace per DAG run (``xray.run_trace_id``), whose segment is the run (named after its DAG: from its start to
its end, sent when the scheduler's write ends it), with these subsegments, each sent as it ends:

- ``queued``: the run's queue time to its start (max_active_runs, the tick that started it), by the scheduler;
- a try (named after its task: its start to its end, annotated with its try number, map index and state), by
  the worker, with its own subsegments ``claim to start`` (the claim's write to the worker's fenced start: the
  invoke's hop) and ``mini scheduler`` (the try's end to the end of the scheduling it does after it).

So "why did this task start 800 ms after its upstream" reads off the trace: the upstream try's mini scheduler and
this try's claim to start, side by side under the run.
"""

from __future__ import annotations

import datetime as dt
import threading

from updraft.model.records import DagRun, TaskInstance
from updraft.traces.xray import SegmentWriter, document, run_segment_id, run_trace_id, span_id


class RunTraces:
    def __init__(self, writer: SegmentWriter | None = None) -> None:
        self.writer = writer or SegmentWriter(None)
        self._tries: dict[str, tuple[str, str, dt.datetime | None]] = {}  # try id -> trace, span, end
        self._lock = threading.Lock()

    def run_started(self, run: DagRun, now: dt.datetime) -> None:
        if run.queued_at is None or run.start_date is not None:
            return
        self.writer.send(document(name="queued", id=span_id(run.dag_id, run.run_id, "queued"),
                                  trace_id=run_trace_id(run.dag_id, run.run_id, run.queued_at),
                                  parent_id=run_segment_id(run.dag_id, run.run_id), start=run.queued_at, end=now))

    def run_finished(self, run: DagRun, state: str, now: dt.datetime) -> None:
        self.writer.send(document(
            name=run.dag_id, id=run_segment_id(run.dag_id, run.run_id),
            trace_id=run_trace_id(run.dag_id, run.run_id, run.queued_at), start=run.start_date or now, end=now,
            annotations={"dag_id": run.dag_id, "run_id": run.run_id, "run_type": run.run_type,
                         "state": str(state)}))

    def try_started(self, ti: TaskInstance, run: DagRun | None) -> None:
        """``ti`` as its fenced start left it, in ``run`` (None: unknown, nothing is traced)."""
        if run is None or ti.try_id is None or ti.start_date is None:
            return
        trace = run_trace_id(run.dag_id, run.run_id, run.queued_at)
        span = span_id(ti.try_id, "try")
        with self._lock:
            self._tries[ti.try_id] = (trace, span, None)
        if ti.queued_at is not None:
            self.writer.send(document(name="claim to start", id=span_id(ti.try_id, "claim"), trace_id=trace,
                                      parent_id=span, start=ti.queued_at, end=ti.start_date))

    def try_finished(self, ti: TaskInstance, end: dt.datetime) -> None:
        with self._lock:
            known = self._tries.get(ti.try_id or "")
            if known is None:
                return
            trace, span, _ = known
            self._tries[ti.try_id or ""] = (trace, span, end)
        self.writer.send(document(
            name=ti.task_id, id=span, trace_id=trace, parent_id=run_segment_id(ti.dag_id, ti.run_id),
            start=ti.start_date or end, end=end,
            annotations={"task_id": ti.task_id, "try_number": ti.try_number, "map_index": ti.map_index,
                         "state": str(getattr(ti.state, "value", ti.state))}))

    def try_reported(self, try_id: str, now: dt.datetime) -> None:
        """The worker is done with the try (its mini scheduler ran): the span from its end to ``now``."""
        with self._lock:
            known = self._tries.pop(try_id, None)
        if known is None or known[2] is None:
            return
        trace, span, end = known[0], known[1], known[2]
        self.writer.send(document(name="mini scheduler", id=span_id(try_id, "mini"), trace_id=trace,
                                  parent_id=span, start=end, end=now))
