"""Custom timetables, evaluated where user code may run (the parser's child) and replayed everywhere else.

A user ``Timetable`` subclass is user code, and nothing but the parser's child process imports user code. So the
child answers the timetable's questions ahead of time, and the rest of Updraft (scheduler, API, ``dags test``'s
scheduling loop) reads the answers:

* :class:`EvaluatedTimetable` is what a serialized DAG holds instead of the user's class: its summary,
  description and flags as the class gave them (the REST API shows them), and the class path.
* :class:`Horizon` is the timetable's next runs: the chain ``next_dagrun_info`` gives from an *anchor* (the DAG's
  last automated data interval, None for a new DAG), with the DAG's ``TimeRestriction``, exactly as Airflow's
  scheduler asks it one run after another; plus the manual data intervals (``infer_manual_data_interval``) at the
  instants asked for and, where the child verified they stay the same between two scheduled runs, for any
  instant in that span. It lives on the DAG's row (not in the versioned document: it changes as runs are made).
* When the scheduler creates a run near the end of the chain, it asks the parser to evaluate again from the new
  anchor (``Horizon.running_low``); the parser re-runs the file, the child computes the chain from the DAG's last
  automated interval as the store has it then, and registration writes it with a conditional write. A stale or
  duplicate evaluation is harmless: :meth:`Horizon.after` answers only for an interval on its own chain, and run
  ids follow from the logical date, so the worst a lost evaluation does is ask again at the next run.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from updraft.sdk.exceptions import UnsupportedFeatureError
from updraft.timetables._time import coerce_datetime, frozen_now
from updraft.timetables.base import DagRunInfo, DataInterval, Timetable

if TYPE_CHECKING:
    from pendulum import DateTime

    from updraft.timetables.base import TimeRestriction

__all__ = ["HORIZON_RUNS", "EvaluatedTimetable", "Horizon", "ManualIntervalNotEvaluated", "evaluate_horizon"]

HORIZON_RUNS = 32
"""Scheduled runs evaluated per horizon: every parse of the file pays for them (~1 ms of user code each)."""

REFRESH_WHEN_LEFT = 8
"""The scheduler asks for a new horizon once this few runs are left after the one it created."""

_MICROSECOND = dt.timedelta(microseconds=1)


class ManualIntervalNotEvaluated(ValueError):
    """A manual run's data interval was asked for an instant the parser did not evaluate the timetable at."""


def _iso(value: dt.datetime) -> str:
    return coerce_datetime(value).isoformat()


def _when(value: str) -> DateTime:
    return coerce_datetime(dt.datetime.fromisoformat(value))


def _interval(pair: Sequence[str]) -> DataInterval:
    return DataInterval(_when(pair[0]), _when(pair[1]))


@dataclass(frozen=True)
class Horizon:
    """The runs after ``anchor`` as the timetable chained them, and the manual intervals known (see module)."""

    anchor: DataInterval | None
    runs: tuple[DagRunInfo, ...]
    ended: bool  # the timetable answered None after the last run: nothing more until its inputs change
    manual_points: tuple[tuple[DateTime, DataInterval], ...] = ()
    manual_spans: tuple[tuple[DateTime, DateTime, DataInterval], ...] = ()  # [from, until): one interval
    flags: dict[str, Any] = field(default_factory=dict)  # timetable_flags() of the live timetable

    def _position(self, last: DataInterval | None) -> int | None:
        """Index of the run following ``last`` on this chain, or None when ``last`` is not on it."""
        if last == self.anchor:
            return 0
        for index, info in enumerate(self.runs):
            if info.data_interval == last:
                return index + 1
        return None

    def after(self, last: DataInterval | None) -> DagRunInfo | None:
        """``next_dagrun_info`` after ``last``: None past the end of the chain or for an interval not on it."""
        position = self._position(last)
        if position is None or position >= len(self.runs):
            return None
        return self.runs[position]

    def covers(self, last: DataInterval | None) -> bool:
        """Whether the run after ``last`` is known (or known not to exist: the timetable ended there)."""
        position = self._position(last)
        return position is not None and (position < len(self.runs) or self.ended)

    def running_low(self, last: DataInterval | None) -> bool:
        """Whether the scheduler, having made the run for ``last``, should ask for a new horizon now."""
        position = self._position(last)
        if position is None:
            return True
        return not self.ended and len(self.runs) - position <= REFRESH_WHEN_LEFT

    def manual_at(self, run_after: dt.datetime) -> DataInterval:
        when = coerce_datetime(run_after)
        for at, interval in self.manual_points:
            if at == when:
                return interval
        for start, until, interval in self.manual_spans:
            if start <= when < until:
                return interval
        raise ManualIntervalNotEvaluated(
            f"the DAG's custom timetable was not evaluated for a manual run at {when.isoformat()}: Updraft runs "
            "timetable code only in the parser, which evaluates manual data intervals between the next scheduled "
            "runs and at the dates `dags test` asks for; trigger it without a logical date, or with one within "
            "the scheduled runs ahead")

    def to_dict(self) -> dict[str, Any]:
        return {
            "anchor": [_iso(self.anchor.start), _iso(self.anchor.end)] if self.anchor else None,
            "runs": [[_iso(r.run_after), _iso(r.data_interval.start), _iso(r.data_interval.end)] for r in self.runs],
            "ended": self.ended,
            "manual_points": [[_iso(at), _iso(i.start), _iso(i.end)] for at, i in self.manual_points],
            "manual_spans": [[_iso(a), _iso(b), _iso(i.start), _iso(i.end)] for a, b, i in self.manual_spans],
            "flags": self.flags,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Horizon:
        return cls(
            anchor=_interval(data["anchor"]) if data.get("anchor") else None,
            runs=tuple(DagRunInfo(_when(r[0]), _interval(r[1:])) for r in data.get("runs", ())),
            ended=bool(data.get("ended")),
            manual_points=tuple((_when(p[0]), _interval(p[1:])) for p in data.get("manual_points", ())),
            manual_spans=tuple((_when(s[0]), _when(s[1]), _interval(s[2:])) for s in data.get("manual_spans", ())),
            flags=dict(data.get("flags") or {}),
        )


class EvaluatedTimetable(Timetable):
    """A custom timetable in a process that has not loaded (and must not load) its class: the serialized DAG's
    ``{"__type": <user class path>, "__var": <its serialize()>}`` kept as is, answering from a :class:`Horizon`.

    The horizon also carries what the class says of itself (summary, flags), evaluated by the parser. Without a
    horizon (a preview of a document alone, a row from before) it knows no run.
    """

    def __init__(self, timetable: str, data: dict[str, Any], horizon: Horizon | None = None) -> None:
        self.timetable = timetable
        self.data = data
        self.horizon = horizon
        flags = horizon.flags if horizon is not None else {}
        self._summary = str(flags.get("summary") or timetable.rpartition(".")[2])
        self.description = str(flags.get("description") or "")
        self.periodic = bool(flags.get("periodic", True))
        self.can_be_scheduled = bool(flags.get("can_be_scheduled", True))
        self.run_ordering = tuple(flags.get("run_ordering") or Timetable.run_ordering)
        self.active_runs_limit = flags.get("active_runs_limit")

    def with_horizon(self, horizon: Horizon | dict[str, Any] | None) -> EvaluatedTimetable:
        if isinstance(horizon, dict):
            horizon = Horizon.from_dict(horizon)
        return EvaluatedTimetable(self.timetable, self.data, horizon)

    def serialize(self) -> dict[str, Any]:
        return self.data

    def __hash__(self) -> int:
        return hash(self.timetable)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EvaluatedTimetable):
            return NotImplemented
        return (self.timetable, self.data) == (other.timetable, other.data)

    def __repr__(self) -> str:
        return f"EvaluatedTimetable({self.timetable!r})"

    @property
    def summary(self) -> str:
        return self._summary

    @property
    def type_name(self) -> str:
        return self.timetable

    def next_dagrun_info(self, *, last_automated_data_interval: DataInterval | None,
                         restriction: TimeRestriction) -> DagRunInfo | None:
        return self.horizon.after(last_automated_data_interval) if self.horizon is not None else None

    def infer_manual_data_interval(self, *, run_after: DateTime) -> DataInterval:
        if self.horizon is None:
            raise ManualIntervalNotEvaluated(f"the custom timetable {self.timetable} has not been evaluated yet")
        return self.horizon.manual_at(run_after)


def timetable_flags(timetable: Timetable) -> dict[str, Any]:
    """What a live timetable says of itself that the scheduler and the API read."""
    limit = timetable.active_runs_limit
    return {"summary": str(timetable.summary), "description": str(timetable.description or ""),
            "periodic": bool(timetable.periodic), "can_be_scheduled": bool(timetable.can_be_scheduled),
            "run_ordering": list(timetable.run_ordering),
            "active_runs_limit": int(limit) if limit is not None else None}


def _chain(timetable: Timetable, anchor: DataInterval | None, restriction: TimeRestriction,
           size: int) -> tuple[list[DagRunInfo], bool]:
    runs: list[DagRunInfo] = []
    last = anchor
    while len(runs) < size:
        info = timetable.next_dagrun_info(last_automated_data_interval=last, restriction=restriction)
        if info is None:
            return runs, True
        if runs and info.run_after <= runs[-1].run_after and info.logical_date <= runs[-1].logical_date:
            break  # the timetable does not move forward: the scheduler asks again later
        runs.append(DagRunInfo(coerce_datetime(info.run_after),
                               DataInterval(coerce_datetime(info.data_interval.start),
                                            coerce_datetime(info.data_interval.end))))
        last = runs[-1].data_interval
    return runs, False


def _manual_spans(timetable: Timetable, anchor: DataInterval | None,
                  runs: list[DagRunInfo]) -> list[tuple[DateTime, DateTime, DataInterval]]:
    """Between consecutive scheduled runs (and before the first: from the anchor's end, or one gap as long as the
    first), the manual interval where it is the same at the span's start and last microsecond (as for every
    data-interval schedule); spans where it moves are left out."""
    bounds = [run.run_after for run in runs]
    if anchor is not None and runs and anchor.end < runs[0].run_after:
        bounds.insert(0, coerce_datetime(anchor.end))
    elif anchor is None and len(runs) > 1:
        bounds.insert(0, runs[0].run_after - (runs[1].run_after - runs[0].run_after))
    spans = []
    for start, until in itertools.pairwise(bounds):
        samples = {timetable.infer_manual_data_interval(run_after=coerce_datetime(at))
                   for at in (start, until - _MICROSECOND)}
        if len(samples) == 1:
            interval = samples.pop()
            spans.append((start, until, DataInterval(coerce_datetime(interval.start), coerce_datetime(interval.end))))
    return spans


def _refuse_custom_run_ids(timetable: Timetable) -> None:
    if type(timetable).generate_run_id is not Timetable.generate_run_id:
        raise UnsupportedFeatureError(
            f"{timetable.type_name}.generate_run_id",
            "a custom timetable's own run ids are not supported: Updraft's scheduler names runs without running "
            "the timetable's code; remove the override to get Airflow's default run ids")


def evaluate_horizon(timetable: Timetable, restriction: TimeRestriction, *, anchor: DataInterval | None,
                     now: dt.datetime, manual_at: Iterable[dt.datetime] = (), size: int = HORIZON_RUNS) -> Horizon:
    """Ask the live user timetable (in the parser's child) for its next ``size`` runs after ``anchor``, and its
    manual intervals (see :class:`Horizon`), with the clock pinned at ``now``."""
    _refuse_custom_run_ids(timetable)
    with frozen_now(now):
        runs, ended = _chain(timetable, anchor, restriction, size)
        points = []
        for at in manual_at:
            interval = timetable.infer_manual_data_interval(run_after=coerce_datetime(at))
            points.append((coerce_datetime(at), DataInterval(coerce_datetime(interval.start),
                                                             coerce_datetime(interval.end))))
        spans = _manual_spans(timetable, anchor, runs)
    return Horizon(anchor, tuple(runs), ended, tuple(points), tuple(spans), timetable_flags(timetable))
